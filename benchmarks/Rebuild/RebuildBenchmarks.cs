using BenchmarkDotNet.Attributes;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// Rebuilding one index (text, keyword and numeric fields over the generated orders) from the same
/// store through the same indexer with FixedBatch and Adaptive, beside reading alone with the controller
/// (ReadOnly), the two bounds (BestFixed, IndexOnly) and Lucene.Net alone (LuceneOnly), per shape at 256 MB, on the local disk and
/// on the read-bound slow disk (the modelled disk at 8 MB/s per stream, 4 ms per request). Product
/// defaults throughout. FixedBatch is the baseline of the Ratio column; "Ratio to bound" divides by
/// max(BestFixed, IndexOnly). Sequential (no overlap) is left out at this size to keep a full run
/// near 20 minutes here: on the slow disk it alone takes 37 s a run (it stays in the live-traffic
/// table and in measure). <see cref="Pinned32"/> is the Adaptive rebuild with L pinned at 32 from
/// the start (BestFixed's winner on the slow disk, or within 2% of it): the stall and the ratio to
/// the bound without the controller's ramp, what the read-bound targets can be held against.
/// </summary>
[Config(typeof(RebuildTableConfig))]
public class RebuildBenchmarks : RebuildBenchmarkBase
{
    [ParamsSource(nameof(Cases))]
    public RebuildCase Case { get; set; } = null!;

    public static IEnumerable<RebuildCase> Cases => RebuildCase.Grid(256, [RebuildDevice.Local, RebuildCase.SlowDisk]);

    protected override RebuildCase CurrentCase => Case;

    protected override int? PinnedConcurrency => 32;

    [Benchmark(Baseline = true)]
    public long FixedBatch() => Run(RebuildMode.FixedBatch).Documents;

    [Benchmark]
    public long Adaptive() => Run(RebuildMode.Adaptive).Documents;

    [Benchmark]
    public long Pinned32() => RunPinned(nameof(Pinned32)).Documents;

    [Benchmark]
    public long ReadOnly() => Run(RebuildMode.ReadOnly).Documents;

    [Benchmark]
    public long IndexOnly() => Run(RebuildMode.IndexOnly).Documents;

    [Benchmark]
    public long BestFixed() => Run(RebuildMode.BestFixed).Documents;

    /// <summary>Lucene.Net alone on the same field values, extracted beforehand: IndexOnly over it is the indexer's own overhead.</summary>
    [Benchmark]
    public long LuceneOnly() => Run(RebuildMode.LuceneOnly).Documents;

    /// <summary>The median Adaptive, Pinned32, ReadOnly and BestFixed runs of this case: timelines and the controller's decisions.</summary>
    [GlobalCleanup]
    public void WriteRuns() => WriteMedianRuns(nameof(Adaptive), nameof(Pinned32), nameof(ReadOnly), nameof(BestFixed));
}
