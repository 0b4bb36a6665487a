using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>The controller against the simulated pipeline in situations it must handle.</summary>
public sealed class ScenarioTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Cooldown = new ControllerOptions().CooldownAfterCut;

    [Fact]
    public void Simulation_ForegroundP99CrossesTarget_HalvesAndDoesNotGrowDuringCooldown()
    {
        var busyFrom = TimeSpan.FromSeconds(30);
        var busyUntil = TimeSpan.FromSeconds(40);
        var result = PrefetchSimulation.Run(new SimulationSetup
        {
            Duration = TimeSpan.FromSeconds(60),
            ForegroundP99 = (now, _) => TimeSpan.FromMilliseconds(now >= busyFrom && now < busyUntil ? 5 : 1),
        });
        Print(result);

        var first = result.Decisions.First(d => d.At >= busyFrom);
        var before = result.Decisions.Last(d => d.At < busyFrom).Decision.Concurrency;
        Assert.Equal(ControllerDecisionKind.Cut, first.Decision.Kind);
        Assert.Equal(before / 2, first.Decision.Concurrency);
        Assert.True(first.Decision.ThrottledByForeground);
        Assert.Contains("foreground p99 5.0 ms > 1.3 ms", first.Decision.Reason);
        var foregroundCuts = result.Decisions.Where(d => d.Decision.Reason.StartsWith("cut: foreground", StringComparison.Ordinal)).ToList();
        Assert.True(foregroundCuts.Count >= 3, "the signal stays high, so L keeps halving after each cooldown");
        foreach (var cut in foregroundCuts)
        {
            Assert.DoesNotContain(result.Decisions, d => d.At > cut.At && d.At < cut.At + Cooldown && d.Decision.Kind == ControllerDecisionKind.Grow);
        }
        Assert.Equal(1, result.MaxConcurrency(busyUntil - TimeSpan.FromSeconds(1), busyUntil));
        Assert.Contains(result.Decisions, d => d.At > busyUntil && d.Decision.Kind == ControllerDecisionKind.Grow);
    }

    [Fact]
    public void Simulation_RebuildWithLPinnedHighFromTheStart_FeedsTheIndexerFromItsFirstReads()
    {
        // The rebuild table's slow disk (8 MB/s a stream, 4 ms a request) and 256 MB of lognormal
        // documents for a 60 MB/s indexer, L pinned at 16 from the start. The ramp gives every
        // reader a short first task, so 16 streams deliver within 40 ms. When it gave one task
        // per size, the first few readers took its short tasks and the other twelve started on
        // 4 MiB (half a second each): the indexer waited 0.42 s (median of nine seeds), 0.03 s now.
        var waits = Enumerable.Range(1, 9).Select(seed => PrefetchSimulation.Run(new SimulationSetup
        {
            Shape = DocumentShape.LogNormal4K,
            DocumentCount = 21_000,
            BudgetBytes = 256 * SimulationSetup.MiB,
            IndexingBytesPerSecond = 60e6,
            Disk = new NetworkDiskModelOptions { StreamBandwidthBytesPerSecond = 8_000_000, RequestLatency = TimeSpan.FromMilliseconds(4) },
            FixedConcurrency = 16,
            Seed = seed,
        }).ConsumerWaited.TotalSeconds).Order().ToList();
        output.WriteLine($"indexer waited {string.Join(", ", waits.Select(w => $"{w:0.000}"))} s");

        Assert.True(waits[4] < 0.1, $"the indexer waited {waits[4]:0.00} s for the first reads (median of nine seeds)");
    }

    [Fact]
    public void Simulation_ForegroundSlowsWithDiskLoad_SettlesWhereTheTargetHolds()
    {
        // Foreground Gets share the disk: each outstanding request adds 0.1 ms to their p99. Learned
        // at L=2 (~1.2 ms), the 1.3x target allows roughly 5-6 requests outstanding.
        var result = PrefetchSimulation.Run(new SimulationSetup
        {
            Duration = TimeSpan.FromSeconds(120),
            ForegroundP99 = (_, outstanding) => TimeSpan.FromMilliseconds(1 + (0.1 * outstanding)),
        });
        Print(result);

        Assert.Contains(result.Decisions, d => d.Decision.ThrottledByForeground);
        Assert.InRange(result.MeanConcurrency(TimeSpan.FromSeconds(60), TimeSpan.FromSeconds(120)), 2, 6);
        Assert.Equal(6, result.MaxConcurrency(TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(120)));
    }

    [Fact]
    public void Simulation_IndexerSlowerThanReads_DoesNotGrow()
    {
        var setup = new SimulationSetup
        {
            Duration = TimeSpan.FromSeconds(30),
            BudgetBytes = 128 * SimulationSetup.MiB,
            IndexingBytesPerSecond = 25e6,
        };
        var result = PrefetchSimulation.Run(setup);
        Print(result);

        // One doubling may start before the buffer shows the indexer is the bottleneck; the hold
        // undoes it at once, and from then on L stays where it started.
        Assert.Equal(setup.Controller.InitialConcurrency, result.MaxConcurrency(TimeSpan.FromSeconds(2), setup.Duration));
        Assert.True(result.MeanConcurrency(TimeSpan.Zero, setup.Duration) < setup.Controller.InitialConcurrency + 0.1, result.Summary("grew"));
        Assert.Contains(result.Decisions, d => d.Decision.Reason.Contains("indexer is the bottleneck", StringComparison.Ordinal));
        Assert.True(result.StallFraction < 0.05, $"the indexer should almost never wait, waited {result.StallFraction:P1}");
    }

    [Fact]
    public void Simulation_StartedAboveUsefulDepth_CutsWithinTwoSecondsAndComesDownToTheDepth()
    {
        var setup = new SimulationSetup
        {
            Duration = TimeSpan.FromSeconds(60),
            Disk = new NetworkDiskModelOptions { UsefulQueueDepth = 4 },
            Controller = new ControllerOptions { MaxConcurrency = 32, InitialConcurrency = 32 },
        };
        var result = PrefetchSimulation.Run(setup);
        Print(result);

        // Every reader's first tasks are the ramp's, which teach the latency baseline nothing, and
        // by the time the others run all of them queue: no read shows an un-queued time, so L comes
        // down by probes (32 to 4 in 14 s), not by a cut for queueing (32 to 16 at 0.75 s, then
        // probes to 4 by 11 s, while every reader but four started on a 4 MiB task).
        var firstCut = result.Decisions.First(d => d.Decision.Kind == ControllerDecisionKind.Cut);
        Assert.True(firstCut.At < TimeSpan.FromSeconds(2), $"first cut only at {firstCut.At}");
        Assert.True(result.MaxConcurrency(TimeSpan.FromSeconds(20), setup.Duration) <= 8, "L was still above twice the depth after 20 s");
        Assert.InRange(result.MeanConcurrency(TimeSpan.FromSeconds(40), setup.Duration), 1, 8);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Simulation_GiantsAmongMultiGetsWhenTheDeviceShrinks_NoCutBeforeAndAQueueingCutAfter(bool deviceCap)
    {
        // The default disk for 20 s (knee 16), then one 4 deep, or one whose 200 MB/s all
        // streams share (knee near 4 readers): the reads L=16 keeps issuing now queue.
        var change = TimeSpan.FromSeconds(20);
        var setup = new SimulationSetup
        {
            Shape = DocumentShape.RareGiants,
            DocumentReadCost = TimeSpan.FromMicroseconds(10),
            Duration = TimeSpan.FromSeconds(60),
            DiskChange = (change, deviceCap ? new NetworkDiskModelOptions { DeviceBandwidthBytesPerSecond = 200_000_000 } : new NetworkDiskModelOptions { UsefulQueueDepth = 4 }),
        };
        var result = PrefetchSimulation.Run(setup);
        Print(result);

        // Before the change a queueing cut is only real when slow start overshot to 32 readers on
        // a device 16 deep (reads take twice their time): it goes back to the depth, no lower.
        Assert.All(
            result.Decisions.Where(d => d.At < change && d.Decision.Reason.StartsWith("cut: reads take", StringComparison.Ordinal)),
            d => Assert.True(d.Decision.Concurrency >= 16, $"{d.At}: {d.Decision.Reason} to L={d.Decision.Concurrency}"));
        Assert.True(result.MeanConcurrency(change - TimeSpan.FromSeconds(5), change) >= 12, "L did not reach the first device's depth");
        var firstCut = result.Decisions.First(d => d.At >= change && d.Decision.Kind == ControllerDecisionKind.Cut);
        Assert.StartsWith("cut: reads take", firstCut.Decision.Reason, StringComparison.Ordinal);
        Assert.True(firstCut.At < change + TimeSpan.FromSeconds(2), $"first cut only at {firstCut.At}");
        Assert.InRange(result.MeanConcurrency(TimeSpan.FromSeconds(40), setup.Duration), 2, 8);
    }

    [Fact]
    public void Simulation_LiveLimitLoweredThenRaised_ClampsThenGrowsAgain()
    {
        var lowFrom = TimeSpan.FromSeconds(30);
        var lowUntil = TimeSpan.FromSeconds(45);
        var result = PrefetchSimulation.Run(new SimulationSetup
        {
            Duration = TimeSpan.FromSeconds(60),
            LiveMaxConcurrency = now => now >= lowFrom && now < lowUntil ? 4 : null,
        });
        Print(result);

        var clamp = result.Decisions.First(d => d.At >= lowFrom).Decision;
        Assert.Equal(4, clamp.Concurrency);
        Assert.Equal("cut: limit 4", clamp.Reason);
        Assert.True(result.MaxConcurrency(lowFrom + TimeSpan.FromSeconds(0.5), lowUntil) <= 4);
        Assert.True(result.MaxConcurrency(lowUntil, TimeSpan.FromSeconds(60)) > 4);
    }

    private void Print(SimulationResult result)
    {
        output.WriteLine(result.Summary("run"));
        foreach (var (at, decision) in result.Decisions.Where(d => d.Decision.Kind != ControllerDecisionKind.Hold || !d.Decision.Reason.Contains("measuring")))
        {
            output.WriteLine($"{at.TotalSeconds:0.00} L={decision.Concurrency} {decision.Kind} {decision.Reason}");
        }
    }
}
