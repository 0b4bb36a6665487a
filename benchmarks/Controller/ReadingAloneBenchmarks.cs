using BenchmarkDotNet.Attributes;
using Indexing.Benchmarks.Rebuild;
using Indexing.Datasets;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Controller;

/// <summary>
/// Reading alone (a sink that drops every batch, direct reads): the adaptive controller (ReadOnly)
/// against the best fixed L (BestFixed) on the same store and device. Every shape at 2 GiB on the
/// default modelled network disk (issue 26's read-bound target: ReadOnly at least 0.85x BestFixed,
/// 80% of its final MB/s within 5 s); the skewed shapes at 512 MB on a slow disk (8 MB/s per
/// stream, 4 ms) and a capped one (200 MB/s for the whole device), where the knee is not the
/// device's depth. The median runs' timelines and decisions go to BenchmarkDotNet.Artifacts/runs.
/// </summary>
[Config(typeof(ControllerTableConfig))]
public class ReadingAloneBenchmarks : RebuildBenchmarkBase
{
    [ParamsSource(nameof(Cases))]
    public RebuildCase Case { get; set; } = null!;

    public static IEnumerable<RebuildCase> Cases =>
        RebuildCase.Grid(2048, [RebuildDevice.ModelledNetworkDisk()])
            .Concat(RebuildCase.Grid(512, [RebuildCase.SlowDisk, RebuildCase.CappedDisk], DatasetShape.LogNormal, DatasetShape.RareGiants));

    protected override RebuildCase CurrentCase => Case;

    [Benchmark(Baseline = true)]
    public long ReadOnly() => Run(RebuildMode.ReadOnly).Documents;

    [Benchmark]
    public long BestFixed() => Run(RebuildMode.BestFixed).Documents;

    [GlobalCleanup]
    public void WriteRuns() => WriteMedianRuns(nameof(ReadOnly), nameof(BestFixed));
}
