using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher.Tests;

public sealed class ConcurrencyControllerTests
{
    private static readonly TimeSpan Cooldown = new ControllerOptions().CooldownAfterCut;

    private static ControllerDriver Driver(int initial = 2, int max = 32) =>
        new(new ControllerOptions { InitialConcurrency = initial, MaxConcurrency = max });

    /// <summary>A first tick in which one read finished (slow streams): the x4 step is taken unjudged.</summary>
    private static ControllerDecision UnjudgedFirstStep(ControllerDriver driver) =>
        driver.Tick(s => s with { Reads = ControllerDriver.Reads(1, ControllerDriver.MiB, TimeSpan.FromMilliseconds(4)), ReadsInFlightTime = 2 * s.TickDuration });

    /// <summary>A tick with the buffer full (the indexer is the bottleneck), then 5 s more of it.</summary>
    private static (ControllerDecision Held, List<(TimeSpan At, ControllerDecision Decision)> After) IndexerBound(ControllerDriver driver) =>
        (driver.Tick(s => s with { BufferedBytes = s.BudgetBytes }), driver.Run(TimeSpan.FromSeconds(5), s => s with { BufferedBytes = s.BudgetBytes }));

    private static Func<ControllerSignals, ControllerSignals> Foreground(double milliseconds) =>
        s => s with { ForegroundP99 = TimeSpan.FromMilliseconds(milliseconds) };

    /// <summary>A driver whose controller has seen 1 s of foreground Gets at 2 ms p99 (learned target 2.6 ms).</summary>
    private static ControllerDriver AfterIdleForeground(int initial, TimeSpan? explicitTarget = null)
    {
        var driver = new ControllerDriver(new ControllerOptions
        {
            InitialConcurrency = initial,
            MaxConcurrency = 32,
            ForegroundTarget = explicitTarget,
        });
        // Held by a rate limit meanwhile, so that L is still the initial one afterwards.
        driver.Run(TimeSpan.FromSeconds(1), s => s with { ForegroundP99 = TimeSpan.FromMilliseconds(2), RateLimited = true });
        return driver;
    }

    [Fact]
    public void Decide_FirstTick_StartsAtInitialConcurrency()
    {
        var driver = Driver(initial: 3);

        var decision = driver.Tick();

        // The driver's reads carry no reads-in-flight time, so the first tick gives no rate to step x4 from.
        Assert.Equal(
            new ControllerDecision(3, Start, "start: L=3; measuring L=3 before growing: no reads in flight were measured", decision.TargetTaskBytes, false),
            decision);
    }

    [Fact]
    public void Decide_FirstTick_IndexerNotWaiting_SaysWhyTheFirstStepWaits()
    {
        var driver = Driver();

        var decision = driver.Tick(s => s with { ConsumerWaitFraction = 0.42, ReadsInFlightTime = 2 * s.TickDuration });

        Assert.Equal((2, Start), (decision.Concurrency, decision.Kind));
        Assert.Equal("start: L=2; measuring L=2 before growing: the indexer waited 42% of the tick, not 50%", decision.Reason);
    }

    [Fact]
    public void Decide_FirstTick_IndexerWaitedMostOfIt_StepsFourTimes()
    {
        // The first tick holds the indexer's own start: waiting 84% of it (the slow disk) is read-bound.
        var driver = Driver();

        var decision = driver.Tick(s => s with { ConsumerWaitFraction = 0.84, ReadsInFlightTime = 2 * s.TickDuration });

        Assert.Equal((8, Start), (decision.Concurrency, decision.Kind));
    }

    [Fact]
    public void Decide_IndexerWaitsMostOfEachTickNotAll_DoublesAsFastAsWhenItWaitsAll()
    {
        // Reads starve the indexer, but each tick a batch lands and keeps it busy 40% of the tick
        // (giants on a slow disk). That is still reading's bottleneck: a doubling is judged on its
        // first tick, as when the indexer waits the whole tick, not after a second of measuring.
        ControllerDriver Climb(double wait)
        {
            var driver = Driver(max: 64);
            driver.Run(TimeSpan.FromSeconds(1), s => s with { ConsumerWaitFraction = wait, ReadsInFlightTime = driver.Controller.Concurrency * s.TickDuration });
            return driver;
        }

        var starved = Climb(1.0);
        var busyAtTimes = Climb(0.6);

        Assert.Equal(64, starved.Controller.Concurrency);
        Assert.Equal(
            starved.Decisions.Select(d => (d.At, d.Decision.Concurrency)),
            busyAtTimes.Decisions.Select(d => (d.At, d.Decision.Concurrency)));
    }

    [Fact]
    public void Decide_FirstTick_ForegroundBeingLearned_SaysWhyTheFirstStepWaits()
    {
        var driver = Driver();

        var decision = driver.Tick(s => s with { ForegroundP99 = TimeSpan.FromMilliseconds(1), ReadsInFlightTime = 2 * s.TickDuration });

        Assert.Equal((2, Start), (decision.Concurrency, decision.Kind));
        Assert.Equal("start: L=2; measuring L=2 before growing: the foreground's idle p99 is being learned", decision.Reason);
    }

    [Fact]
    public void Decide_FirstTick_ReadBoundWithARate_StepsFourTimesAtOnce()
    {
        var driver = Driver();

        var decision = driver.Tick(s => s with { ReadsInFlightTime = 2 * s.TickDuration });

        Assert.Equal((8, Start), (decision.Concurrency, decision.Kind));
        Assert.StartsWith("start: L=2; grow: slow start, probing L=8", decision.Reason);
    }

    [Fact]
    public void Decide_ForegroundP99AboveLearnedTarget_HalvesConcurrency()
    {
        var driver = AfterIdleForeground(initial: 8);

        var decision = driver.Tick(Foreground(4.1));

        Assert.Equal((Cut, 4, true), (decision.Kind, decision.Concurrency, decision.ThrottledByForeground));
        Assert.Equal("cut: foreground p99 4.1 ms > 2.6 ms", decision.Reason);
    }

    [Fact]
    public void Decide_AfterForegroundCut_NeitherGrowsNorCutsUntilCooldownEnds()
    {
        var driver = AfterIdleForeground(initial: 8);
        var cut = driver.Tick(Foreground(5));
        var cutAt = driver.Now;

        var cooling = driver.Run(Cooldown - ControllerDriver.TickLength, Foreground(5));
        var after = driver.Tick(Foreground(5));

        Assert.Equal(4, cut.Concurrency);
        Assert.All(cooling, d =>
        {
            Assert.Equal((Hold, 4, true), (d.Decision.Kind, d.Decision.Concurrency, d.Decision.ThrottledByForeground));
            Assert.StartsWith("hold: cooldown", d.Decision.Reason, StringComparison.Ordinal);
        });
        Assert.Equal(cutAt + Cooldown, driver.Now);
        Assert.Equal((Cut, 2), (after.Kind, after.Concurrency));
    }

    [Fact]
    public void Decide_ForegroundBackUnderTarget_GrowsAgainAfterCooldown()
    {
        var driver = AfterIdleForeground(initial: 8);
        driver.Tick(Foreground(5));

        var decisions = driver.Run(TimeSpan.FromSeconds(10), Foreground(2));

        var firstGrow = decisions.First(d => d.Decision.Kind == Grow);
        Assert.True(firstGrow.At >= decisions[0].At + Cooldown - ControllerDriver.TickLength);
        Assert.Equal(5, firstGrow.Decision.Concurrency);
        Assert.False(firstGrow.Decision.ThrottledByForeground);
    }

    [Fact]
    public void Decide_ExplicitForegroundTarget_ReplacesTheLearnedOne()
    {
        var driver = AfterIdleForeground(initial: 8, explicitTarget: TimeSpan.FromMilliseconds(10));

        var under = driver.Tick(Foreground(8));
        var over = driver.Tick(Foreground(11));

        Assert.Equal(8, under.Concurrency);
        Assert.Equal(("cut: foreground p99 11.0 ms > 10.0 ms", 4), (over.Reason, over.Concurrency));
    }

    [Fact]
    public void Decide_ForegroundOverTargetAtOneReader_HoldsThrottled()
    {
        var driver = AfterIdleForeground(initial: 1);

        var decision = driver.Tick(Foreground(9));

        Assert.Equal((Hold, 1, true), (decision.Kind, decision.Concurrency, decision.ThrottledByForeground));
        Assert.Equal("hold: foreground p99 9.0 ms > 2.6 ms at L=1", decision.Reason);
    }

    [Fact]
    public void Decide_ReadsTakeThreeTimesTheirUnqueuedTime_CutsToWhereTheyWouldNotQueue()
    {
        var driver = Driver(initial: 24);
        driver.BytesPerSecondAt = _ => 800e6;
        driver.Run(TimeSpan.FromSeconds(1), s => s with { RateLimited = true });

        // The judgement is over the last second of reads: the second tick of 12.4 ms reads tips it.
        var first = driver.Tick(s => s with { Reads = ControllerDriver.Reads(12.4) });
        var decision = driver.Tick(s => s with { Reads = ControllerDriver.Reads(12.4) });
        var next = driver.Tick(s => s with { Reads = ControllerDriver.Reads(12.4) });

        Assert.Equal((Hold, 24), (first.Kind, first.Concurrency));
        // 2.05x: 24 readers for a device that serves about 12 without queueing.
        Assert.Equal((Cut, 12), (decision.Kind, decision.Concurrency));
        Assert.Equal("cut: reads take 2.1x their un-queued time (8.2 ms vs 4.0 ms), at least 2.1x in its one size class", decision.Reason);
        Assert.Equal((Hold, 12), (next.Kind, next.Concurrency));
        Assert.StartsWith("hold: cooldown", next.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Decide_SlightlyQueuedUnderALowLimit_CutsByTheQueueingFactorAtMost()
    {
        // 1.3x with a limit of 1.2: L / 1.3 would be a smaller cut than the configured 0.75.
        var driver = new ControllerDriver(new ControllerOptions { InitialConcurrency = 24, MaxConcurrency = 32, LatencyInflationLimit = 1.2 });
        driver.BytesPerSecondAt = _ => 800e6;
        driver.Run(TimeSpan.FromSeconds(1), s => s with { MemoryHigh = true });

        var decisions = driver.Run(TimeSpan.FromSeconds(1), s => s with { MemoryHigh = true, Reads = ControllerDriver.Reads(5.2) });

        var cut = Assert.Single(decisions, d => d.Decision.Kind == Cut);
        Assert.Equal(18, cut.Decision.Concurrency);
        Assert.StartsWith("cut: reads take 1.2x their un-queued time", cut.Decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Decide_LatencyInflatesButHigherConcurrencyDeliversMore_DoesNotCut()
    {
        var driver = Driver();
        var latency = (int l) => 4 * Math.Max(1, l / 2.0);

        var decisions = driver.Run(TimeSpan.FromSeconds(30), s => s with { Reads = ControllerDriver.Reads(latency(driver.Controller.Concurrency)) });

        Assert.DoesNotContain(decisions, d => d.Decision.Reason.StartsWith("cut: reads take", StringComparison.Ordinal));
        Assert.True(driver.Controller.Concurrency >= 8, $"L={driver.Controller.Concurrency}");
    }

    [Fact]
    public void Decide_QueueingWhileHeldAtANewL_CutsOnceTheMeasurementIsOverdue()
    {
        var options = new ControllerOptions { InitialConcurrency = 2, MaxConcurrency = 32 };
        // Slow start keeps 16 and a fine step up (20) goes back to it; the probes down find 13 (the
        // fine step nearest the knee at 12), and after the plateau 16 is probed again (a doubling
        // would go back when held).
        var driver = new ControllerDriver(options) { BytesPerSecondAt = l => 50e6 * Math.Min(l, 12) };
        driver.TickUntil("grow: probing L=16 (L=13 delivers", TimeSpan.FromMinutes(1));
        var grownAt = driver.Now;

        // Reads queue (3x their un-queued time) while memory is high, so every tick holds and
        // the new L is never measured: waiting for that measurement must not veto the cut for long.
        var decisions = driver.Run(TimeSpan.FromSeconds(40), s => s with { MemoryHigh = true, Reads = ControllerDriver.Reads(12) });

        var firstCut = decisions.First(d => d.Decision.Kind == Cut);
        Assert.True(firstCut.At - grownAt <= options.SettleTime + options.MaxMeasureTime,
            $"grew to 13 at {grownAt}, first cut at {firstCut.At}: {firstCut.Decision.Reason}");
        // 16 was measured on the way down and did not beat 13, so the cut need not wait at all:
        // the window still holds some un-queued reads.
        Assert.StartsWith("cut: reads take", firstCut.Decision.Reason, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(2, false)]
    [InlineData(3, true)]
    public void Decide_FewerThanThreeReadsInTheLastSecond_IgnoresLatency(int reads, bool cuts)
    {
        // Memory is high throughout, so L stays unless the queueing rule (which comes first) cuts.
        var driver = Driver(initial: 8);
        driver.Tick(s => s with { MemoryHigh = true });
        // A second without reads empties the judgement's window; the baseline (4 ms) stays.
        driver.Run(TimeSpan.FromSeconds(1), s => s with { MemoryHigh = true, Reads = Array.Empty<ReadSample>() });

        var decision = driver.Tick(s => s with { MemoryHigh = true, Reads = ControllerDriver.Reads(reads, ControllerDriver.MiB, TimeSpan.FromMilliseconds(100)) });

        Assert.Equal(cuts ? (Cut, 4) : (Hold, 8), (decision.Kind, decision.Concurrency));
    }

    [Theory]
    [InlineData(0.93, 0.5, "hold: indexer is the bottleneck (buffered 93% of budget)")]
    [InlineData(0.30, 0.0, "hold: indexer is the bottleneck (it waited 0% over 1.0 s, buffered 30% of budget)")]
    public void Decide_IndexerIsTheBottleneck_HoldsAndSaysSo(double bufferedFraction, double waitFraction, string reason)
    {
        var driver = Driver();
        driver.Tick();
        Func<ControllerSignals, ControllerSignals> busy = s => s with
        {
            BufferedBytes = (long)(s.BudgetBytes * bufferedFraction),
            ConsumerWaitFraction = waitFraction,
        };
        // A full buffer holds at once; a busy indexer once the first tick (it waited) has left the 1 s window.
        var first = driver.Run(new ControllerOptions().BusyConsumerWindow, busy);
        Assert.All(first, d => Assert.Equal(2, d.Decision.Concurrency));

        var decisions = driver.Run(TimeSpan.FromSeconds(30), busy);

        Assert.All(decisions, d => Assert.Equal(new ControllerDecision(2, Hold, reason, d.Decision.TargetTaskBytes, false), d.Decision));
    }

    [Fact]
    public void Decide_IndexerBusyForOneTickInEveryFour_DoesNotHoldAndKeepsClimbing()
    {
        // A large document lands every second: the indexer is busy for the tick after it (waits 0%,
        // 30% buffered) and waits 40% of the other three. Over the window it waits ~30%: not the bottleneck.
        var driver = Driver();
        var tick = 0;

        var decisions = driver.Run(TimeSpan.FromSeconds(15), s => ++tick % 4 == 0
            ? s with { BufferedBytes = (long)(s.BudgetBytes * 0.3), ConsumerWaitFraction = 0 }
            : s with { BufferedBytes = s.BudgetBytes / 50, ConsumerWaitFraction = 0.4 });

        Assert.DoesNotContain(decisions, d => d.Decision.Reason.Contains("indexer is the bottleneck", StringComparison.Ordinal));
        Assert.True(driver.Controller.Concurrency > 4, $"L={driver.Controller.Concurrency}");
    }

    [Fact]
    public void Decide_IndexerWaitsWithLittleBuffered_KeepsClimbing()
    {
        var driver = Driver();

        driver.Run(TimeSpan.FromSeconds(10), s => s with { BufferedBytes = s.BudgetBytes / 20, ConsumerWaitFraction = 0.3 });

        Assert.True(driver.Controller.Concurrency > 4);
    }

    [Theory]
    [InlineData(true, false, "hold: memory high")]
    [InlineData(false, true, "hold: rate-limited by the max MB/s setting")]
    public void Decide_MemoryHighOrRateLimited_Holds(bool memoryHigh, bool rateLimited, string reason)
    {
        var driver = Driver();
        driver.Tick();

        var decisions = driver.Run(TimeSpan.FromSeconds(20), s => s with { MemoryHigh = memoryHigh, RateLimited = rateLimited });

        Assert.All(decisions, d => Assert.Equal((Hold, 2, reason), (d.Decision.Kind, d.Decision.Concurrency, d.Decision.Reason)));
    }

    [Fact]
    public void Decide_LiveLimitLoweredBelowConcurrency_ClampsAtOnce()
    {
        var driver = Driver(initial: 8);
        driver.Tick();

        var decision = driver.Tick(s => s with { MaxConcurrency = 4 });

        Assert.Equal((Cut, 4, "cut: limit 4"), (decision.Kind, decision.Concurrency, decision.Reason));
    }

    [Fact]
    public void Decide_LiveLimitRaisedAgain_GrowsWithoutWaitingForAPlateau()
    {
        var driver = Driver();
        var limited = driver.Run(TimeSpan.FromSeconds(20), s => s with { MaxConcurrency = 4 });
        var raisedAt = driver.Now;

        var raised = driver.Run(TimeSpan.FromSeconds(10));

        Assert.All(limited, d => Assert.True(d.Decision.Concurrency <= 4));
        // Nothing was learned about the device above 4: growth is multiplicative again.
        var firstGrow = raised.First(d => d.Decision.Kind == Grow);
        Assert.Equal((8, "grow: slow start, probing L=8 (L=4 delivers 200 MB/s)"), (firstGrow.Decision.Concurrency, firstGrow.Decision.Reason));
        Assert.True(firstGrow.At - raisedAt <= TimeSpan.FromSeconds(2), $"grew only {firstGrow.At - raisedAt} after the raise");
        Assert.True(driver.Controller.Concurrency >= 16);
    }

    [Fact]
    public void Decide_LiveLimitLoweredDuringFailingDownwardProbe_StaysAtTheLimit()
    {
        // Pinned at 4 by the live limit, the first probe goes down to 3 (which delivers 25% less).
        var driver = Driver(initial: 4);
        while (!driver.Tick(s => s with { MaxConcurrency = 4 }).Reason.StartsWith("cut: probing L=3", StringComparison.Ordinal))
        {
        }

        // The operator lowers the limit to 3 while L=3 is measured: the probe fails, but 4 is no longer allowed.
        var decisions = driver.Run(TimeSpan.FromSeconds(10), s => s with { MaxConcurrency = 3 });

        Assert.All(decisions, d => Assert.True(d.Decision.Concurrency <= 3, $"{d.At}: L={d.Decision.Concurrency} '{d.Decision.Reason}'"));
        Assert.Contains(decisions, d => d.Decision.Reason == "hold: L=3 delivered -25% vs L=4, stays at limit 3");
    }

    [Fact]
    public void Decide_LimitChangingUnderEveryKindOfSignal_NeverExceedsIt()
    {
        var random = new Random(12345);
        var driver = Driver(initial: 6, max: 12);
        driver.BytesPerSecondAt = l => 50e6 * Math.Min(l, 5 + random.Next(3));
        var limit = 12;

        for (var tick = 0; tick < 4000; tick++)
        {
            if (random.Next(8) == 0)
            {
                // Mostly one step, as an operator nudges it; now and then anywhere.
                limit = random.Next(10) == 0 ? random.Next(1, 16) : Math.Clamp(limit + random.Next(-1, 2), 1, 15);
            }
            var decision = driver.Tick(s => s with
            {
                MaxConcurrency = limit,
                MemoryHigh = random.Next(30) == 0,
                ForegroundP99 = TimeSpan.FromMilliseconds(random.Next(50) == 0 ? 10 : 2),
                Reads = ControllerDriver.Reads(random.Next(40) == 0 ? 20 : 4),
            });

            Assert.True(decision.Concurrency >= 1 && decision.Concurrency <= Math.Min(limit, 12),
                $"tick {tick}: L={decision.Concurrency} with limit {limit}: '{decision.Reason}'");
        }
    }

    [Fact]
    public void Decide_OptionsMaximumBelowLiveLimit_OptionsWin()
    {
        var driver = Driver(max: 3);

        var decisions = driver.Run(TimeSpan.FromSeconds(30), s => s with { MaxConcurrency = 10 });

        Assert.Equal(3, decisions.Max(d => d.Decision.Concurrency));
    }

    [Fact]
    public void Decide_MeasuredStreams_SizesTasksTo75MillisecondsEach()
    {
        var driver = Driver();
        driver.BytesPerSecondAt = l => 60e6 * l;

        var decision = driver.Tick();

        Assert.Equal(4_500_000, decision.TargetTaskBytes, tolerance: 1);
        Assert.Equal(decision.TargetTaskBytes, driver.Controller.TargetTaskBytes);
    }

    [Fact]
    public void Decide_TickAfterACut_SizesTasksFromTheReadersThatWereRunning()
    {
        var driver = AfterIdleForeground(initial: 8);
        var before = driver.Tick().TargetTaskBytes;
        var cut = driver.Tick(Foreground(5));

        // Reads issued by the eight readers still complete in the tick after the cut to four:
        // eight streams' bytes, which are not four streams at twice the speed.
        var after = driver.Tick(s => s with { ForegroundP99 = TimeSpan.FromMilliseconds(5), BytesDelivered = (long)(8 * 50e6 * s.TickDuration.TotalSeconds) });

        Assert.Equal(4, cut.Concurrency);
        Assert.Equal(3_750_000, before, tolerance: 1);
        Assert.Equal(before, after.TargetTaskBytes);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-10L)]
    public void Decide_ZeroOrNegativeForegroundP99_ThrowsAskingForNull(long ticks)
    {
        var driver = Driver(initial: 8);

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => driver.Tick(s => s with { ForegroundP99 = TimeSpan.FromTicks(ticks) }));

        Assert.Contains($"ForegroundP99 must be positive (was {TimeSpan.FromTicks(ticks)})", error.Message, StringComparison.Ordinal);
        Assert.Contains("pass null when the window has no samples", error.Message, StringComparison.Ordinal);
        Assert.Empty(driver.Controller.History);
    }

    [Fact]
    public void Decide_HoldDuringADoublingNotYetMeasured_GoesBackToWhereItStarted()
    {
        var driver = Driver();
        while (driver.Tick().Reason != "grow: +100% MB/s at L=4 over 2, slow start: probing 8")
        {
        }

        var (held, after) = IndexerBound(driver);

        Assert.Equal((Hold, 4), (held.Kind, held.Concurrency));
        Assert.Equal("hold: indexer is the bottleneck (buffered 100% of budget); back to 4, L=8 was not measured", held.Reason);
        Assert.All(after, d => Assert.Equal(4, d.Decision.Concurrency));
    }

    [Fact]
    public void Decide_HoldAfterAnUnjudgedFirstStep_GoesBackToTheInitialL()
    {
        var driver = Driver();
        var first = UnjudgedFirstStep(driver);

        var (held, after) = IndexerBound(driver);

        Assert.Equal("start: L=2; grow: slow start, reads too slow to measure L=2 in a tick: L=8", first.Reason);
        Assert.Equal((Hold, 2), (held.Kind, held.Concurrency));
        Assert.Equal("hold: indexer is the bottleneck (buffered 100% of budget); back to 2, L=8 was not measured", held.Reason);
        Assert.All(after, d => Assert.Equal(2, d.Decision.Concurrency));
    }

    [Fact]
    public void Decide_HoldOnceTheClimbFromAnUnjudgedFirstStepWasMeasured_KeepsL()
    {
        var driver = Driver();
        UnjudgedFirstStep(driver);
        // 8 measured, doubled to 16 and 32, which is the limit: a plateau there, no probe in progress.
        var atLimit = driver.TickUntil("hold: +", TimeSpan.FromSeconds(10));

        var held = driver.Tick(s => s with { BufferedBytes = s.BudgetBytes });

        Assert.EndsWith("at limit 32", atLimit.Reason, StringComparison.Ordinal);
        Assert.Equal((Hold, 32), (held.Kind, held.Concurrency));
    }

    [Fact]
    public void Decide_FixedConcurrency_NeitherGrowsNorCutsButAnOperatorLimitClamps()
    {
        var driver = new ControllerDriver(new ControllerOptions { FixedConcurrency = 8 });

        var decisions = driver.Run(TimeSpan.FromSeconds(20), s => s with
        {
            Reads = ControllerDriver.Reads(20),
            LargestRecentDocumentBytes = 1L << 30,
        });
        var limited = driver.Tick(s => s with { MaxConcurrency = 3 });
        var released = driver.Tick();

        Assert.Equal("start: L fixed at 8", decisions[0].Decision.Reason);
        Assert.All(decisions, d => Assert.Equal(8, d.Decision.Concurrency));
        Assert.Equal((Cut, 3, "cut: L fixed at 8 (limit 3)"), (limited.Kind, limited.Concurrency, limited.Reason));
        Assert.Equal((Grow, 8), (released.Kind, released.Concurrency));
    }
}
