using BenchmarkDotNet.Attributes;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// Rebuilding one index (text, keyword and numeric fields over the generated orders) from the same
/// store through the same indexer with each strategy, beside the two bounds, per shape and device.
/// FixedBatch is the baseline of the Ratio column; "Ratio to bound" divides by max(ReadOnly, IndexOnly).
/// </summary>
[Config(typeof(RebuildTableConfig))]
public class RebuildBenchmarks : RebuildBenchmarkBase
{
    [ParamsSource(nameof(Cases))]
    public RebuildCase Case { get; set; } = null!;

    public static IEnumerable<RebuildCase> Cases => RebuildCase.All();

    protected override RebuildCase CurrentCase => Case;

    [Benchmark]
    public long Sequential() => Run(RebuildMode.Sequential).Documents;

    [Benchmark(Baseline = true)]
    public long FixedBatch() => Run(RebuildMode.FixedBatch).Documents;

    [Benchmark]
    public long Adaptive() => Run(RebuildMode.Adaptive).Documents;

    [Benchmark]
    public long ReadOnly() => Run(RebuildMode.ReadOnly).Documents;

    [Benchmark]
    public long IndexOnly() => Run(RebuildMode.IndexOnly).Documents;
}
