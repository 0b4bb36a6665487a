using System.Diagnostics;
using System.Globalization;
using Indexing.Datasets;
using Indexing.Storage;
using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The strategy figures on real RocksDB: each size shape generated into a store (direct reads, so
/// the page cache does not serve the reads), read by the three strategies through the public
/// <see cref="Prefetch.Start"/>, on the local disk and under the modelled network disk (default
/// parameters), into an indexer modelled as 10 ns per byte (100 MB/s). Medians of
/// PREFETCH_FIGURES_RUNS runs (default 1) of about PREFETCH_FIGURES_MB per shape (default 8, so
/// the suite stays fast; benchmarks/results/README.md, "Other figures", quotes 100 MB, 3 runs). It asserts delivery only: speed
/// targets belong in written results, not in timed tests.
/// </summary>
[Collection(TimingSensitive.Name)]
public sealed class RocksDbStrategyFiguresTests(ITestOutputHelper output)
{
    private static long TargetBytesPerShape => EnvironmentNumber("PREFETCH_FIGURES_MB", 8) * 1_000_000;

    private static int Runs => (int)EnvironmentNumber("PREFETCH_FIGURES_RUNS", 1);

    [Fact]
    public async Task Measure_EachShapeStrategyAndDisk_ReportsMediansOnRocksDb()
    {
        output.WriteLine($"RocksDB, direct reads; {new NetworkDiskModelOptions()}; indexer {ModelledIndexer.BytesPerSecond / 1e6:0} MB/s; {Runs} runs per cell, medians");
        output.WriteLine($"machine: {Environment.ProcessorCount} cores, server GC {System.Runtime.GCSettings.IsServerGC}");
        output.WriteLine("shape | disk | strategy | MB/s | consumer stall | mean L | documents");
        foreach (var shape in Enum.GetValues<DatasetShape>())
        {
            using var temp = new TempStore(new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, directReads: true));
            var written = temp.Store.PutMany(DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: TargetBytesPerShape))
                .Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
            output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{shape.ToName()}: loaded {written.Documents} documents, {written.Bytes / 1e6:0.0} MB at {written.MegabytesPerSecond:0} MB/s (PutMany, no fsync)"));
            foreach (var modelled in new[] { false, true })
            {
                foreach (var strategy in Enum.GetValues<PrefetchStrategy>())
                {
                    var runs = new List<Figures>();
                    for (var run = 0; run < Runs; run++)
                    {
                        var disk = modelled ? new NetworkDiskModel(new NetworkDiskModelOptions()) : null;
                        var figures = await MeasureAsync(Prefetch.Start(temp.Store, DatasetSpec.DefaultCollection, strategy, new PrefetchOptions(), disk));
                        Assert.Equal(written.Documents, figures.Documents);
                        runs.Add(figures);
                    }

                    output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{shape.ToName()} | {(modelled ? "modelled network disk" : "local")} | {strategy} | {Median(runs, f => f.MegabytesPerSecond):0.0} | " +
                        $"{Median(runs, f => f.StallPercent):0.0}% | {Median(runs, f => f.MeanL):0.00} | {written.Documents}"));
                    foreach (var decision in runs[^1].Decisions.Where(d => d.Kind != "hold"))
                    {
                        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"    {decision.Elapsed.TotalSeconds,6:0.00}s L={decision.ConcurrencyLimit} {decision.Reason}"));
                    }
                }
            }

            temp.AssertNoOpenHandles();
        }
    }

    private static async Task<Figures> MeasureAsync(IBatchSource prefetcher)
    {
        await using (prefetcher)
        {
            var run = await ModelledIndexer.ConsumeAsync(prefetcher);
            var pressure = prefetcher.Pressure;
            return new Figures(run.MegabytesPerSecond, pressure.ConsumerWaitTime / run.Elapsed * 100, pressure.MeanConcurrencyLimit, run.Documents, pressure.RecentDecisions);
        }
    }

    private static double Median(List<Figures> runs, Func<Figures, double> value)
    {
        var sorted = runs.Select(value).Order().ToList();
        return sorted[sorted.Count / 2];
    }

    private static long EnvironmentNumber(string name, long fallback) =>
        long.TryParse(Environment.GetEnvironmentVariable(name), out var value) && value > 0 ? value : fallback;

    private readonly record struct Figures(double MegabytesPerSecond, double StallPercent, double MeanL, int Documents,
        System.Collections.Immutable.ImmutableArray<PrefetchDecisionEntry> Decisions);
}
