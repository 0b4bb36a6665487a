using BenchmarkDotNet.Attributes;
using Indexing.Benchmarks.Rebuild;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Controller;

/// <summary>
/// A rebuild bound by reading: only small keyword and numeric fields over rare giants (2 GiB), so
/// that the indexer parses quickly and reading through the default modelled network disk is the
/// larger half. Issue 26's target: Adaptive at most 1.2x the bound max(BestFixed, IndexOnly) and at
/// most 0.6x FixedBatch.
/// </summary>
[Config(typeof(ControllerTableConfig))]
public class ReadingBoundRebuildBenchmarks : RebuildBenchmarkBase
{
    /// <summary>Keyword and numeric fields only: no text to analyse.</summary>
    public static IndexDefinition SmallFields { get; } = IndexDefinition.Parse($$"""
        { "name": "orders-small-fields", "collection": "{{DatasetSpec.DefaultCollection}}", "fields": [
          { "name": "status", "path": "status", "type": "keyword" },
          { "name": "tier", "path": "customer.tier", "type": "keyword" },
          { "name": "total", "path": "total", "type": "double" },
          { "name": "itemCount", "path": "itemCount", "type": "long" }
        ] }
        """);

    [ParamsSource(nameof(Cases))]
    public RebuildCase Case { get; set; } = null!;

    public static IEnumerable<RebuildCase> Cases => RebuildCase.Grid(2048, [RebuildDevice.ModelledNetworkDisk()], DatasetShape.RareGiants);

    protected override RebuildCase CurrentCase => Case;

    protected override IndexDefinition Definition => SmallFields;

    [Benchmark(Baseline = true)]
    public long FixedBatch() => Run(RebuildMode.FixedBatch).Documents;

    [Benchmark]
    public long Adaptive() => Run(RebuildMode.Adaptive).Documents;

    [Benchmark]
    public long ReadOnly() => Run(RebuildMode.ReadOnly).Documents;

    [Benchmark]
    public long BestFixed() => Run(RebuildMode.BestFixed).Documents;

    [Benchmark]
    public long IndexOnly() => Run(RebuildMode.IndexOnly).Documents;

    [GlobalCleanup]
    public void WriteRuns() => WriteMedianRuns(RebuildMode.Adaptive, RebuildMode.ReadOnly, RebuildMode.BestFixed);
}
