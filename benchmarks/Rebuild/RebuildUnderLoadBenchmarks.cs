using BenchmarkDotNet.Attributes;
using Indexing.Indexer;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// Live traffic: each strategy rebuilds while 4 closed-loop readers Get random ids of the same store
/// (on the modelled disk through the same modelled device). Foreground p50/p99 idle (3 s before the
/// rebuild) and during it, and the rebuild's MB/s. The skewed shapes where prefetch pressure is
/// highest; the last Adaptive run's timeline of each case is written as CSV and SVG.
/// </summary>
[Config(typeof(LiveTrafficConfig))]
public class RebuildUnderLoadBenchmarks : RebuildBenchmarkBase
{
    private const int ForegroundReaders = 4;

    [ParamsSource(nameof(Cases))]
    public RebuildCase Case { get; set; } = null!;

    // The sizes of the first tables (30 MB, rare giants 60 MB so that several giants are in it),
    // with small takes: this table is about foreground latency, and at 256 MB it alone would take
    // longer than every other rebuild table together.
    public static IEnumerable<RebuildCase> Cases =>
        RebuildCase.Grid(30, Devices, Datasets.DatasetShape.LogNormal).Concat(RebuildCase.Grid(60, Devices, Datasets.DatasetShape.RareGiants));

    private static RebuildDevice[] Devices => [RebuildDevice.Local, RebuildDevice.ModelledNetworkDisk()];

    protected override RebuildCase CurrentCase => Case;

    protected override IndexOptions IndexOptions => RebuildWorkload.SmallTakes;

    [Benchmark]
    public long Sequential() => Run(RebuildMode.Sequential, ForegroundReaders).Documents;

    [Benchmark(Baseline = true)]
    public long FixedBatch() => Run(RebuildMode.FixedBatch, ForegroundReaders).Documents;

    [Benchmark]
    public long Adaptive() => Run(RebuildMode.Adaptive, ForegroundReaders).Documents;

    /// <summary>Writes the last Adaptive run's timeline of this case next to BenchmarkDotNet's own results.</summary>
    [GlobalCleanup(Target = nameof(Adaptive))]
    public void WriteTimeline()
    {
        var runs = RebuildResults.Get(nameof(RebuildUnderLoadBenchmarks), Case.ToString(), nameof(Adaptive));
        if (runs.Count == 0)
        {
            return;
        }

        var directory = Path.Combine("BenchmarkDotNet.Artifacts", "timelines");
        Directory.CreateDirectory(directory);
        var name = $"adaptive-{Case.Shape.ToString().ToLowerInvariant()}-{Case.Device.Name}-{ForegroundReaders}-readers";
        RebuildTimelineFiles.WriteCsv(Path.Combine(directory, name + ".csv"), runs[^1].Timeline);
        RebuildTimelineFiles.WriteSvg(Path.Combine(directory, name + ".svg"), $"Adaptive rebuild, {Case}, {ForegroundReaders} foreground readers ({Case.Device})", runs[^1].Timeline);
    }
}
