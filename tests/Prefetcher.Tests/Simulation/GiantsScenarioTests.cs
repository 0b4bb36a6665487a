using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Rare giants (0.5% of documents 2-20 MB). With an indexer faster than the readers at L=2, each
/// giant lands as one lump that keeps the indexer busy for a tick or two, which one tick alone
/// mistakes for an indexer bottleneck although over a second the indexer keeps waiting.
/// </summary>
public sealed class GiantsScenarioTests(ITestOutputHelper output)
{
    [Fact]
    public void Simulation_RareGiantsIndexerFasterThanTwoStreams_GrowsAndStallsLess()
    {
        // Default disk (60 MB/s per stream): L=2 reads at most 120 MB/s for a 150 MB/s indexer.
        // 100 ms ticks and a 64 MiB budget make a 20 MB giant fill >= 10% of the budget and keep
        // the indexer busy for whole ticks, as batches of giants do in the pipeline with 250 ms ticks.
        var setup = new SimulationSetup
        {
            Shape = DocumentShape.RareGiants,
            Duration = TimeSpan.FromSeconds(60),
            Tick = TimeSpan.FromMilliseconds(100),
            BudgetBytes = 64 * SimulationSetup.MiB,
            IndexingBytesPerSecond = 150e6,
        };
        var adaptive = PrefetchSimulation.Run(setup);
        var atTwo = PrefetchSimulation.Run(setup with { FixedConcurrency = 2 });
        var atFour = PrefetchSimulation.Run(setup with { FixedConcurrency = 4 });
        output.WriteLine(adaptive.Summary("adaptive"));
        output.WriteLine(atTwo.Summary("fixed L=2"));
        output.WriteLine(atFour.Summary("fixed L=4"));
        foreach (var (at, decision) in adaptive.Decisions.Where(d => d.Decision.Kind != ControllerDecisionKind.Hold || !d.Decision.Reason.Contains("measuring")))
        {
            output.WriteLine($"{at.TotalSeconds:0.00} L={decision.Concurrency} {decision.Kind} {decision.Reason}");
        }

        // Fixed L=2 stalls ~21% and fixed L=4 ~0.4% (giants read alone, the small documents between
        // them in short reads, as the planner cuts them): an adaptive run that grows past 2 within
        // the first half and spends the rest near 3-4 stalls well under L=2's stall.
        Assert.True(atTwo.StallFraction > 0.15, atTwo.Summary("fixed L=2 no longer starves the indexer; the scenario tests nothing"));
        Assert.True(adaptive.MaxConcurrency(TimeSpan.Zero, TimeSpan.FromSeconds(10)) > 2, adaptive.Summary("stayed at L=2"));
        Assert.True(adaptive.MeanConcurrency(TimeSpan.FromSeconds(30), setup.Duration) > 2.5, adaptive.Summary("did not stay above L=2"));
        Assert.True(adaptive.StallFraction < 0.15, adaptive.Summary("the indexer still stalls"));
    }

    [Fact]
    public void Simulation_RareGiantsRebuildOnTheSlowDisk_StarvesTheIndexerLittleLongerThanLPinnedHigh()
    {
        // The rebuild table's read-bound case: 8 MB/s a stream, 4 ms a request, so a 2-20 MB giant
        // takes 0.25-2.5 s and the indexer (45 MB/s, as the benchmarks' definition indexes on this
        // machine) waits for the first giants whatever L is. What the controller adds to that wait
        // is its ramp from L=2. Nine seeds, medians: L pinned at 32 waits 0.50 s, the controller
        // 0.85 s. With the climb's fast path only when the indexer waited 90% of a tick (half on the
        // first tick), 0.97 s: ticks in which a batch of giants landed held L=8 for three to five
        // ticks. With 90% on every tick, 1.22 s.
        var waits = Enumerable.Range(1, 9).Select(seed =>
        {
            var setup = new SimulationSetup
            {
                Shape = DocumentShape.RareGiants,
                DocumentCount = 4_500,
                Duration = TimeSpan.FromSeconds(60),
                BudgetBytes = 256 * SimulationSetup.MiB,
                IndexingBytesPerSecond = 45e6,
                Disk = new NetworkDiskModelOptions { StreamBandwidthBytesPerSecond = 8_000_000, RequestLatency = TimeSpan.FromMilliseconds(4) },
                Seed = seed,
            };
            var adaptive = PrefetchSimulation.Run(setup);
            var pinned = PrefetchSimulation.Run(setup with { FixedConcurrency = 32 });
            output.WriteLine($"seed {seed}: {adaptive.Summary("adaptive")}; {pinned.Summary("L=32")}");
            return (Adaptive: adaptive.ConsumerWaited.TotalSeconds, Pinned: pinned.ConsumerWaited.TotalSeconds);
        }).ToList();

        static double Median(IEnumerable<double> values) => values.Order().ElementAt(values.Count() / 2);
        var adaptiveWait = Median(waits.Select(w => w.Adaptive));
        var pinnedWait = Median(waits.Select(w => w.Pinned));
        output.WriteLine($"median wait: adaptive {adaptiveWait:0.00} s, L=32 {pinnedWait:0.00} s");

        Assert.True(pinnedWait > 0.3, $"L=32 waited {pinnedWait:0.00} s: the first giants no longer make the indexer wait, the scenario tests nothing");
        Assert.True(adaptiveWait - pinnedWait <= 0.4, $"the controller's ramp starved the indexer {adaptiveWait - pinnedWait:0.00} s longer than L=32 (median of nine seeds)");
    }
}
