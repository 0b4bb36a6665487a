using System.Diagnostics;
using System.Globalization;
using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Measures the three strategies on each size shape through the modelled network disk (default
/// parameters), with an in-memory indexer that costs 10 ns per byte (100 MB/s): MB/s delivered,
/// consumer stall and mean L; the figures go to the test output. By default each shape is about
/// 16 MB so the suite stays fast (the figures are then dominated by start-up); set
/// PREFETCH_FIGURES_MB (e.g. 300) for figures worth quoting. It asserts delivery only: speed
/// targets belong in benchmark results, not in timed tests.
/// </summary>
[Collection(TimingSensitive.Name)]
public sealed class StrategyFiguresTests(ITestOutputHelper output)
{
    private const long DefaultBytesPerShape = 16_000_000;

    private static long TargetBytesPerShape =>
        long.TryParse(Environment.GetEnvironmentVariable("PREFETCH_FIGURES_MB"), out var megabytes) && megabytes > 0
            ? megabytes * 1_000_000
            : DefaultBytesPerShape;

    [Fact]
    public async Task Measure_EachShapeAndStrategy_ReportsThroughputStallAndConcurrency()
    {
        output.WriteLine($"{new NetworkDiskModelOptions()}; indexer {ModelledIndexer.BytesPerSecond / 1e6:0} MB/s; {new PrefetchOptions()}");
        output.WriteLine($"machine: {Environment.ProcessorCount} cores, server GC {System.Runtime.GCSettings.IsServerGC}");
        output.WriteLine("shape | strategy | MB/s | consumer stall | mean L | stalls | GC pause | documents");
        foreach (var shape in SizeShapes.All)
        {
            var documents = ShapeOfAboutTargetBytes(shape);
            foreach (var strategy in Strategies.All)
            {
                var figures = await MeasureAsync(strategy, documents);
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{shape} | {strategy} | {figures.MegabytesPerSecond:0.0} | {figures.StallPercent:0.0}% | {figures.MeanL:0.00} | {figures.Stalls} | {figures.GcPause.TotalMilliseconds:0} ms | {documents.Count}"));
                Assert.Equal(documents.Count, figures.Documents);
                foreach (var decision in figures.Decisions)
                {
                    output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"    {decision.Elapsed.TotalSeconds,6:0.00}s L={decision.ConcurrencyLimit} {decision.Reason}"));
                }
            }
        }
    }

    private static List<(string Id, byte[] Body)> ShapeOfAboutTargetBytes(string shape)
    {
        var sample = SizeShapes.Generate(shape, 10_000, seed: 3);
        var count = (int)(TargetBytesPerShape / sample.Average());
        return TestCollections.FromSizes(SizeShapes.Generate(shape, count, seed: 3));
    }

    private static async Task<Figures> MeasureAsync(string strategy, List<(string Id, byte[] Body)> documents)
    {
        var source = new InMemoryReadSourceDouble(documents);
        await using var prefetcher = Strategies.Start(
            strategy, Strategies.OnModelledDisk(source), new PrefetchOptions(), PrefetchOptions.DefaultBaselineBatchDocuments);
        var gcPauseBefore = GC.GetTotalPauseDuration();
        var run = await ModelledIndexer.ConsumeAsync(prefetcher);
        var pressure = prefetcher.Pressure;
        return new Figures(
            run.MegabytesPerSecond,
            pressure.ConsumerWaitTime / run.Elapsed * 100,
            pressure.MeanConcurrencyLimit,
            pressure.StallCount,
            GC.GetTotalPauseDuration() - gcPauseBefore,
            run.Documents,
            pressure.RecentDecisions);
    }

    private readonly record struct Figures(double MegabytesPerSecond, double StallPercent, double MeanL, long Stalls, TimeSpan GcPause, int Documents,
        System.Collections.Immutable.ImmutableArray<PrefetchDecisionEntry> Decisions);
}
