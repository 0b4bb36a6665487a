using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The controller against the best fixed L, read-bound (an indexer that takes everything at once),
/// in virtual time on the modelled disk: skewed size mixes where the old latency-per-MiB signal cut
/// falsely, and devices whose knee is not their queue depth (a device-wide cap, slow streams).
/// BestFixed is the fastest of fixed L in {1, 2, 4, 8, 16, 32, 64} on the same setup, as the
/// measurement engine's bound.
/// </summary>
public sealed class ReadBoundMixTests(ITestOutputHelper output)
{
    private static readonly int[] FixedLs = [1, 2, 4, 8, 16, 32, 64];
    private static readonly TimeSpan Duration = TimeSpan.FromSeconds(40);

    public static TheoryData<string> Shapes => ["uniform", "lognormal", "growing", "giants"];

    private static SimulationSetup Setup(string shape) => new()
    {
        Shape = shape switch
        {
            "uniform" => DocumentShape.Uniform4K,
            "lognormal" => DocumentShape.LogNormal4K,
            "growing" => DocumentShape.Growing100x(400_000),
            _ => DocumentShape.RareGiants,
        },
        Duration = Duration,
        BudgetBytes = PrefetchOptions.DefaultBudgetBytes,
        // What a MultiGet or range read costs the store per document (CPU on 2 cores).
        DocumentReadCost = TimeSpan.FromMicroseconds(10),
    };

    [Theory]
    [MemberData(nameof(Shapes))]
    public void Adaptive_SkewedMixOnTheDefaultDisk_ReachesBestFixedFastWithoutQueueingCuts(string shape)
    {
        var setup = Setup(shape);
        var (bestL, best) = BestFixed(setup);

        var adaptive = PrefetchSimulation.Run(setup);
        Print(adaptive, bestL, best);

        Assert.DoesNotContain(adaptive.Decisions, d => d.Decision.Reason.StartsWith("cut: reads take", StringComparison.Ordinal));
        Assert.True(adaptive.BytesPerSecond >= 0.85 * best, $"{adaptive.BytesPerSecond / 1e6:0} MB/s against BestFixed {best / 1e6:0} MB/s at L={bestL}");
        var final = adaptive.BytesPerSecondBetween(Duration / 2, Duration);
        var atFive = adaptive.BytesPerSecondBetween(TimeSpan.FromSeconds(4), TimeSpan.FromSeconds(5));
        Assert.True(atFive >= 0.8 * final, $"{atFive / 1e6:0} MB/s in the fifth second, {final / 1e6:0} MB/s at the end");
    }

    [Theory]
    [InlineData("capped")]
    [InlineData("slow")]
    public void Adaptive_DeviceWhoseKneeIsNotItsDepth_FindsTheKneeAndStaysNearIt(string device)
    {
        var setup = Setup("giants") with
        {
            Disk = device == "capped"
                ? new NetworkDiskModelOptions { DeviceBandwidthBytesPerSecond = 200_000_000 }
                : new NetworkDiskModelOptions { StreamBandwidthBytesPerSecond = 8_000_000, RequestLatency = TimeSpan.FromMilliseconds(4) },
            Duration = TimeSpan.FromSeconds(60),
        };
        var (bestL, best) = BestFixed(setup);
        var knee = Knee(setup, best);

        var adaptive = PrefetchSimulation.Run(setup);
        Print(adaptive, bestL, best);
        output.WriteLine($"knee L={knee}");

        Assert.True(adaptive.BytesPerSecond >= 0.85 * best, $"{adaptive.BytesPerSecond / 1e6:0} MB/s against BestFixed {best / 1e6:0} MB/s at L={bestL}");
        var meanL = adaptive.MeanConcurrency(TimeSpan.FromSeconds(30), setup.Duration);
        Assert.InRange(meanL, 0.75 * knee, 1.5 * knee);
    }

    [Theory]
    [InlineData("giants", 37_000)]
    [InlineData("lognormal", 200_000)]
    public void Adaptive_ShortReadOfAboutTwoGiB_ClimbsToTheDevicesDepthInASecondAndAHalf(string shape, long documents)
    {
        // Read whole, as the benchmarks do: BestFixed reads it in a few seconds, so every tick
        // spent climbing counts. Leaving the first tick unmeasured cost a tick at L=2.
        var setup = Setup(shape) with { DocumentCount = documents };
        var (bestL, best) = BestFixed(setup);

        var adaptive = PrefetchSimulation.Run(setup);
        Print(adaptive, bestL, best);

        var reached = adaptive.ConcurrencySteps.First(s => s.Concurrency >= 16).At;
        Assert.True(reached <= TimeSpan.FromSeconds(1.6), $"L=16 only at {reached.TotalSeconds:0.00} s");
        Assert.True(adaptive.BytesPerSecond >= 0.7 * best, $"{adaptive.BytesPerSecond / 1e6:0} MB/s against BestFixed {best / 1e6:0} MB/s at L={bestL}");
    }

    [Theory]
    [InlineData("giants", 37_000)]
    [InlineData("lognormal", 200_000)]
    [InlineData("growing", 100_000)]
    [InlineData("gradual", 37_000)]
    [InlineData("slow", 9_000)]
    [InlineData("growcpu", 100_000)]
    public void Adaptive_ShortRead_DeliversMostOfBestFixed(string shape, long documents)
    {
        // About 2 GiB (512 MiB on the slow disk), read whole: BestFixed is done in 2.4-4 s, so the
        // ramp from the initial L is most of the gap. Two decisions a tick per doubling (settle,
        // then measure) held a short read of giants at 0.71x.
        var setup = (shape is "gradual" or "slow" ? Setup("giants") : Setup(shape)) with { DocumentCount = documents };
        setup = shape switch
        {
            "growing" => setup with { Shape = DocumentShape.Growing100x(documents) },
            // Sizes growing along key order behind the CPU work of reading: the small documents
            // first cost store work per document, so L=2 measures far lower than it ends.
            "growcpu" => setup with { Shape = DocumentShape.Growing100x(documents), ReadCpu = (2, 280e6), DocumentReadCost = TimeSpan.FromMicroseconds(40) },
            "gradual" => setup with { ReadCpu = (2, 280e6) },
            "slow" => setup with { Disk = new NetworkDiskModelOptions { StreamBandwidthBytesPerSecond = 8_000_000, RequestLatency = TimeSpan.FromMilliseconds(4) } },
            _ => setup,
        };
        var (bestL, best) = BestFixed(setup);

        var adaptive = PrefetchSimulation.Run(setup);
        Print(adaptive, bestL, best);

        Assert.True(adaptive.BytesPerSecond >= 0.85 * best, $"{adaptive.BytesPerSecond / 1e6:0} MB/s against BestFixed {best / 1e6:0} MB/s at L={bestL}");
    }

    [Fact]
    public void Adaptive_ReadingBendsGraduallyPastTheKnee_StaysAtTheDoublingThatPaid()
    {
        // Behind the CPU work of reading (2 cores) the device's throughput bends instead of
        // stopping: 8 -> 16 readers still gain a third, 16 -> 32 a few percent. Taking the knee
        // as sharp sent L back to about 11 and climbed by one, each step gaining too little to
        // keep, for the rest of the read.
        var setup = Setup("giants") with { DocumentCount = 37_000, ReadCpu = (2, 280e6) };
        var (bestL, best) = BestFixed(setup);

        var adaptive = PrefetchSimulation.Run(setup);
        Print(adaptive, bestL, best);

        // The climb from L=2 costs about a fifth of so short a read.
        Assert.True(adaptive.BytesPerSecond >= 0.78 * best, $"{adaptive.BytesPerSecond / 1e6:0} MB/s against BestFixed {best / 1e6:0} MB/s at L={bestL}");
        var secondHalf = adaptive.MeanConcurrency(adaptive.Elapsed / 2, adaptive.Elapsed);
        Assert.True(secondHalf >= 14, $"mean L {secondHalf:0.0} over the second half");
    }

    [Fact]
    public void Adaptive_GrowingDocumentsOnADeviceThatBendsGradually_DeliversMostOfBestFixed()
    {
        // Sizes growing along key order behind a stage all reads share: throughput goes as
        // L / (1 + L / 10), so every doubling past 8 still gains 13-40% and BestFixed is L=64, as
        // on the real machine (L=16 324, 32 429, 64 502 MB/s). Slow start ends early there; kept
        // for a plateau, that L held the read at 0.69x, and +1 steps past 16 could not show 5%.
        // About 3.3 GB: BestFixed reads it in 6.5 s.
        var setup = Setup("growing") with
        {
            Shape = DocumentShape.Growing100x(150_000),
            DocumentCount = 150_000,
            SharedStageBytesPerSecond = 600e6,
        };
        var (bestL, best) = BestFixed(setup);

        var adaptive = PrefetchSimulation.Run(setup);
        Print(adaptive, bestL, best);

        Assert.Equal(64, bestL);
        Assert.True(adaptive.BytesPerSecond >= 0.85 * best, $"{adaptive.BytesPerSecond / 1e6:0} MB/s against BestFixed {best / 1e6:0} MB/s at L={bestL}");
    }

    [Fact]
    public void Adaptive_CappedDeviceReadOfTwoGiB_StaysNearTheKneeWithoutLosingThroughput()
    {
        // 200 MB/s shared by all streams, which 4 readers deliver. The x4 first step (2 -> 8)
        // gains +90-130% of a proportional +300%; kept for a plateau, L sat at 8 for most of
        // such a read (mean L 7.8), its extra readers only queueing.
        var setup = Setup("giants") with
        {
            DocumentCount = 37_000,
            Disk = new NetworkDiskModelOptions { DeviceBandwidthBytesPerSecond = 200_000_000 },
        };
        var (bestL, best) = BestFixed(setup);
        var knee = Knee(setup, best);

        var adaptive = PrefetchSimulation.Run(setup);
        Print(adaptive, bestL, best);
        output.WriteLine($"knee L={knee}");

        Assert.InRange(adaptive.MeanConcurrency(TimeSpan.Zero, adaptive.Elapsed), 0.75 * knee, 1.5 * knee);
        Assert.True(adaptive.BytesPerSecond >= 0.95 * best, $"{adaptive.BytesPerSecond / 1e6:0} MB/s against BestFixed {best / 1e6:0} MB/s at L={bestL}");
    }

    /// <summary>The knee: the fewest readers within 3% of the best fixed L's MB/s.</summary>
    private static int Knee(SimulationSetup setup, double best) =>
        Enumerable.Range(1, 64).First(l => PrefetchSimulation.Run(setup with { FixedConcurrency = l }).BytesPerSecond >= 0.97 * best);

    private (int L, double BytesPerSecond) BestFixed(SimulationSetup setup)
    {
        var runs = FixedLs.Select(l => (L: l, BytesPerSecond: PrefetchSimulation.Run(setup with { FixedConcurrency = l }).BytesPerSecond)).ToList();
        output.WriteLine(string.Join(", ", runs.Select(r => FormattableString.Invariant($"L={r.L}: {r.BytesPerSecond / 1e6:0}"))) + " MB/s");
        return runs.MaxBy(r => r.BytesPerSecond);
    }

    private void Print(SimulationResult result, int bestL, double best)
    {
        output.WriteLine(result.Summary("adaptive") + FormattableString.Invariant($"; BestFixed L={bestL} {best / 1e6:0} MB/s"));
        foreach (var (at, decision) in result.Decisions.Where(d => d.Decision.Kind != ControllerDecisionKind.Hold || !d.Decision.Reason.Contains("measuring") && !d.Decision.Reason.Contains("settling") && !d.Decision.Reason.Contains("plateau at")))
        {
            output.WriteLine(FormattableString.Invariant($"{at.TotalSeconds:0.00} L={decision.Concurrency} {decision.Reason}"));
        }
    }
}
