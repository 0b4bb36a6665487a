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
}
