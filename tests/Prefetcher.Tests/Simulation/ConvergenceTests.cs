using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

public sealed class ConvergenceTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData(16)]
    [InlineData(4)]
    public void Adaptive_ReadBound_ConvergesNearBestFixedConcurrency(int usefulQueueDepth)
    {
        var setup = new SimulationSetup { Disk = new NetworkDiskModelOptions { UsefulQueueDepth = usefulQueueDepth } };
        var sweep = Enumerable.Range(1, 24)
            .Select(l => (L: l, BytesPerSecond: PrefetchSimulation.Run(setup with { FixedConcurrency = l, Duration = TimeSpan.FromSeconds(15) })
                .BytesPerSecondBetween(TimeSpan.FromSeconds(3), TimeSpan.FromSeconds(15))))
            .ToList();
        foreach (var (l, bps) in sweep)
        {
            output.WriteLine($"fixed L={l}: {bps / 1e6:0} MB/s");
        }
        var best = sweep.Max(x => x.BytesPerSecond);
        var knee = sweep.First(x => x.BytesPerSecond >= 0.98 * best).L;

        var adaptive = PrefetchSimulation.Run(setup with { Duration = TimeSpan.FromSeconds(120) });
        var meanL = adaptive.MeanConcurrency(TimeSpan.FromSeconds(60), TimeSpan.FromSeconds(120));
        output.WriteLine($"knee L*={knee}, best {best / 1e6:0} MB/s; adaptive mean L {meanL:0.0}, {adaptive.BytesPerSecond / 1e6:0} MB/s");
        foreach (var entry in adaptive.Decisions.Where(d => d.Decision.Kind != ControllerDecisionKind.Hold || d.Decision.Reason.Contains("back")))
        {
            output.WriteLine($"{entry.At.TotalSeconds:0.00} L={entry.Decision.Concurrency} {entry.Decision.Reason} task {entry.Decision.TargetTaskBytes}");
        }
        Assert.InRange(meanL, 0.6 * knee, 1.5 * knee);
        Assert.True(adaptive.BytesPerSecond >= 0.85 * best);
    }

    /// <summary>
    /// The default ceiling (64, not 4 x cores = 8 here) on the default modelled disk (useful depth
    /// 16) with a consumer faster than the disk: over the second half of a 120 s run, the adaptive
    /// L is within 25% of the best fixed L (the smallest within 2% of the best MB/s of a sweep)
    /// and delivers at least 90% of the best MB/s.
    /// </summary>
    [Fact]
    public void Adaptive_DefaultCeilingFastConsumer_SettlesNearBestFixedLAndItsThroughput()
    {
        var setup = new SimulationSetup { Controller = new ControllerOptions(), IndexingBytesPerSecond = 10e9, BudgetBytes = PrefetchOptions.DefaultBudgetBytes };
        var sweep = Enumerable.Range(1, 32)
            .Select(l => (L: l, BytesPerSecond: PrefetchSimulation.Run(setup with { FixedConcurrency = l, Duration = TimeSpan.FromSeconds(20) })
                .BytesPerSecondBetween(TimeSpan.FromSeconds(5), TimeSpan.FromSeconds(20))))
            .ToList();
        var best = sweep.Max(x => x.BytesPerSecond);
        var bestL = sweep.First(x => x.BytesPerSecond >= 0.98 * best).L;

        var adaptive = PrefetchSimulation.Run(setup with { Duration = TimeSpan.FromSeconds(120) });
        var meanL = adaptive.MeanConcurrency(TimeSpan.FromSeconds(60), TimeSpan.FromSeconds(120));
        var settled = adaptive.BytesPerSecondBetween(TimeSpan.FromSeconds(60), TimeSpan.FromSeconds(120));
        output.WriteLine($"default ceiling {new ControllerOptions().MaxConcurrency}: best fixed L={bestL} at {best / 1e6:0} MB/s (sweep 1..32); " +
            $"adaptive mean L {meanL:0.0}, {settled / 1e6:0} MB/s over 60-120 s ({settled / best:P0} of best); max L seen {adaptive.MaxConcurrency(TimeSpan.Zero, adaptive.Elapsed)}");

        Assert.InRange(meanL, 0.75 * bestL, 1.25 * bestL);
        Assert.True(settled >= 0.9 * best, $"Adaptive delivered {settled / 1e6:0} MB/s, below 90% of the best fixed L's {best / 1e6:0} MB/s.");
    }
}
