using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher.Tests;

public sealed class ConcurrencyControllerTests
{
    private static readonly TimeSpan Cooldown = new ControllerOptions().CooldownAfterCut;

    private static ControllerDriver Driver(int initial = 2, int max = 32) =>
        new(new ControllerOptions { InitialConcurrency = initial, MaxConcurrency = max });

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
        driver.Run(TimeSpan.FromSeconds(1), Foreground(2));
        return driver;
    }

    [Fact]
    public void Decide_FirstTick_StartsAtInitialConcurrency()
    {
        var driver = Driver(initial: 3);

        var decision = driver.Tick();

        Assert.Equal(new ControllerDecision(3, Start, "start: L=3", decision.TargetTaskBytes, false), decision);
    }

    [Fact]
    public void Decide_ThroughputScalesUpToAKnee_GrowsOneStepAtATimeAndStopsThere()
    {
        var driver = Driver();
        driver.BytesPerSecondAt = l => 50e6 * Math.Min(l, 6);

        var decisions = driver.Run(TimeSpan.FromSeconds(60));

        for (var i = 1; i < decisions.Count; i++)
        {
            if (decisions[i].Decision.Kind == Grow)
            {
                Assert.Equal(decisions[i - 1].Decision.Concurrency + 1, decisions[i].Decision.Concurrency);
            }
        }
        Assert.Contains(decisions, d => d.Decision.Reason == "grow: +20% MB/s at L=6 over 5, probing 7");
        Assert.Contains(decisions, d => d.Decision.Reason == "hold: L=7 gained +0% < 5%, back to 6");
        Assert.InRange(decisions.Max(d => d.Decision.Concurrency), 6, 7);
        Assert.InRange(decisions.Skip(decisions.Count / 2).Min(d => d.Decision.Concurrency), 5, 6);
    }

    [Fact]
    public void Decide_ProbeGainsBelowMinimum_StepsBackAndHoldsForThePlateau()
    {
        var driver = Driver();
        driver.BytesPerSecondAt = l => 50e6 * Math.Min(l, 3) * (l > 3 ? 1.02 : 1);

        var decisions = driver.Run(TimeSpan.FromSeconds(40));

        var back = decisions.FindIndex(d => d.Decision.Reason == "hold: L=4 gained +2% < 5%, back to 3");
        Assert.True(back >= 0);
        var plateauEnd = decisions[back].At + new ControllerOptions().PlateauTime;
        var during = decisions.Skip(back + 1).TakeWhile(d => d.At < plateauEnd).ToList();
        Assert.NotEmpty(during);
        Assert.All(during, d => Assert.Equal((Hold, 3), (d.Decision.Kind, d.Decision.Concurrency)));
        // After the plateau the next probe looks downwards, and finds L=2 clearly worse.
        Assert.Contains(decisions, d => d.At >= plateauEnd && d.Decision.Reason.StartsWith("cut: probing L=2", StringComparison.Ordinal));
        Assert.Contains(decisions, d => d.Decision.Reason == "hold: L=2 delivered -33% vs L=3, back to 3");
    }

    [Fact]
    public void Decide_OneHoldTickDuringAPlateau_KeepsThePlateau()
    {
        var driver = Driver();
        driver.BytesPerSecondAt = l => 50e6 * Math.Min(l, 3);
        while (driver.Tick().Reason != "hold: L=4 gained +0% < 5%, back to 3")
        {
        }
        var plateauEnd = driver.Now + new ControllerOptions().PlateauTime;
        driver.Tick();

        // An intermittent bottleneck elsewhere: one tick of holding, then nothing again.
        driver.Tick(s => s with { MemoryHigh = true });
        var decisions = driver.Run(TimeSpan.FromSeconds(15));

        var probe = decisions.First(d => d.Decision.Reason.Contains(": probing L=", StringComparison.Ordinal));
        Assert.True(probe.At >= plateauEnd, $"probed at {probe.At}, the plateau ran until {plateauEnd}: {probe.Decision.Reason}");
        Assert.Contains(decisions, d => d.Decision.Reason.StartsWith("hold: plateau at L=3", StringComparison.Ordinal));
    }

    [Fact]
    public void Decide_HalfSecondTicks_ProbesDecideAfterThreeTicksOfMeasurement()
    {
        // MeasureTime (1 s) is two such ticks, too few for an error estimate: without a minimum
        // of three ticks every probe would measure on until MaxMeasureTime (4 s).
        var tick = TimeSpan.FromMilliseconds(500);
        var driver = new ControllerDriver(new ControllerOptions { InitialConcurrency = 2, MaxConcurrency = 32 }) { TickDuration = tick };

        var grows = driver.Run(TimeSpan.FromSeconds(20)).Where(d => d.Decision.Kind == Grow).ToList();

        Assert.True(grows.Count >= 5, $"{grows.Count} steps up in 20 s");
        Assert.Equal("grow: +50% MB/s at L=3 over 2, probing 4", grows[1].Decision.Reason);
        // Each step: one tick settling (500 ms), then three ticks measured.
        Assert.All(grows.Zip(grows.Skip(1)), pair => Assert.Equal(4 * tick, pair.Second.At - pair.First.At));
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
    public void Decide_OneUnusuallyLowForegroundSample_DoesNotTightenTheTarget()
    {
        var driver = Driver(initial: 8);
        foreach (var p99 in new[] { 2.0, 2.0, 0.5, 2.0 })
        {
            driver.Tick(Foreground(p99));
        }

        var decision = driver.Tick(Foreground(2.5));

        Assert.Equal(8, decision.Concurrency);
        Assert.False(decision.ThrottledByForeground);
    }

    [Fact]
    public void Decide_LowFirstForegroundSample_DoesNotBecomeTheBaseline()
    {
        var driver = Driver(initial: 8);
        driver.Tick(Foreground(0.5));

        var decisions = driver.Run(TimeSpan.FromSeconds(5), Foreground(2));

        Assert.All(decisions, d => Assert.False(d.Decision.ThrottledByForeground || d.Decision.Kind == Cut, d.Decision.Reason));
        Assert.True(driver.Controller.Concurrency >= 8);
    }

    [Fact]
    public void Decide_FewerThanThreeForegroundSamples_NoTargetYet()
    {
        var driver = Driver(initial: 8);
        driver.Tick(Foreground(1));

        var second = driver.Tick(Foreground(50));
        var third = driver.Tick(Foreground(50));

        Assert.Equal((8, false), (second.Concurrency, second.ThrottledByForeground));
        Assert.Equal((8, false), (third.Concurrency, third.ThrottledByForeground));
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
    public void Decide_LatencyPerMiBFarAboveItsMinimum_CutsByTheQueueingFactor()
    {
        var driver = Driver(initial: 24);
        driver.BytesPerSecondAt = _ => 800e6;
        driver.Run(TimeSpan.FromMilliseconds(500));

        var decision = driver.Tick(s => s with { ReadLatencyPerMiB = TimeSpan.FromMilliseconds(12.4) });
        var next = driver.Tick(s => s with { ReadLatencyPerMiB = TimeSpan.FromMilliseconds(12.4) });

        Assert.Equal((Cut, 18), (decision.Kind, decision.Concurrency));
        Assert.Equal("cut: latency/MiB 3.1x its minimum (12.4 ms vs 4.0 ms)", decision.Reason);
        Assert.Equal((Hold, 18), (next.Kind, next.Concurrency));
        Assert.StartsWith("hold: cooldown", next.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Decide_LatencyInflatesButHigherConcurrencyDeliversMore_DoesNotCut()
    {
        var driver = Driver();
        var latency = (int l) => TimeSpan.FromMilliseconds(4 * Math.Max(1, l / 2.0));

        var decisions = driver.Run(TimeSpan.FromSeconds(30), s => s with { ReadLatencyPerMiB = latency(driver.Controller.Concurrency) });

        Assert.DoesNotContain(decisions, d => d.Decision.Reason.Contains("latency/MiB", StringComparison.Ordinal));
        Assert.True(driver.Controller.Concurrency >= 8, $"L={driver.Controller.Concurrency}");
    }

    [Fact]
    public void Decide_QueueingWhileHeldAtANewL_CutsOnceTheMeasurementIsOverdue()
    {
        var options = new ControllerOptions { InitialConcurrency = 2, MaxConcurrency = 32 };
        var driver = new ControllerDriver(options);
        driver.Run(TimeSpan.FromSeconds(10));
        var grown = driver.Decisions.Last(d => d.Decision.Kind == Grow);

        // Reads queue (3x the minimum latency/MiB) while memory is high, so every tick holds and
        // the new L is never measured: waiting for that measurement must not veto the cut for long.
        var decisions = driver.Run(TimeSpan.FromSeconds(40), s => s with { MemoryHigh = true, ReadLatencyPerMiB = TimeSpan.FromMilliseconds(12) });

        var firstCut = decisions.First(d => d.Decision.Kind == Cut);
        Assert.True(firstCut.At - grown.At <= options.SettleTime + options.MaxMeasureTime,
            $"grew to {grown.Decision.Concurrency} at {grown.At}, first cut at {firstCut.At}: {firstCut.Decision.Reason}");
        Assert.StartsWith("cut: latency/MiB 3.0x its minimum", firstCut.Decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Decide_TooFewReadsForAMedian_IgnoresLatency()
    {
        var driver = Driver(initial: 8);
        driver.Run(TimeSpan.FromMilliseconds(500));

        var decision = driver.Tick(s => s with { ReadLatencyPerMiB = TimeSpan.FromMilliseconds(100), ReadsCompleted = 2 });

        Assert.Equal((Hold, 8), (decision.Kind, decision.Concurrency));
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
        var firstGrow = raised.First(d => d.Decision.Kind == Grow);
        Assert.Equal(5, firstGrow.Decision.Concurrency);
        Assert.True(firstGrow.At - raisedAt <= TimeSpan.FromSeconds(2), $"grew only {firstGrow.At - raisedAt} after the raise");
        Assert.True(driver.Controller.Concurrency >= 7);
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
                ReadLatencyPerMiB = TimeSpan.FromMilliseconds(random.Next(40) == 0 ? 20 : 4),
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

    [Fact]
    public void History_SteadyHolds_AreKeptOnce()
    {
        var driver = Driver();

        driver.Run(TimeSpan.FromSeconds(10), s => s with { MemoryHigh = true });

        Assert.Equal(
            [(Start, "start: L=2"), (Hold, "hold: memory high")],
            driver.Controller.History.Select(e => (e.Kind, e.Reason)));
    }

    [Fact]
    public void History_ManyChanges_KeepsTheLast50OldestFirst()
    {
        var driver = Driver();
        var tick = 0;

        driver.Run(TimeSpan.FromSeconds(30), s => ++tick % 2 == 0 ? s with { MemoryHigh = true } : s with { RateLimited = true });

        var history = driver.Controller.History;
        Assert.Equal(50, history.Length);
        Assert.Equal(driver.Now, history[^1].At);
        Assert.Equal(driver.Now - (49 * ControllerDriver.TickLength), history[0].At);
    }

    [Fact]
    public void History_Snapshot_DoesNotChangeWithLaterDecisions()
    {
        var driver = Driver();
        driver.Tick();
        var snapshot = driver.Controller.History;

        driver.Run(TimeSpan.FromSeconds(10));

        Assert.Single(snapshot);
        Assert.True(driver.Controller.History.Length > 1);
    }

    [Fact]
    public void Decide_TimeGoesBackwards_Throws()
    {
        var driver = Driver();
        driver.Tick();

        Assert.Throws<ArgumentException>(() => driver.Tick(s => s with { Now = TimeSpan.Zero }));
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

    [Theory]
    [InlineData(-1, 0, 0, "ReadsCompleted")]
    [InlineData(0, -1, 0, "DocumentsDelivered")]
    [InlineData(0, 0, -1, "BytesDelivered")]
    public void Decide_NegativeCount_ThrowsNamingIt(int reads, long documents, long bytes, string name)
    {
        var driver = Driver();

        var error = Assert.Throws<ArgumentOutOfRangeException>(() =>
            driver.Tick(s => s with { ReadsCompleted = reads, DocumentsDelivered = documents, BytesDelivered = bytes }));

        Assert.Contains($"{name} must not be negative (was -1)", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Decide_NonPositiveTick_Throws()
    {
        var driver = Driver();

        Assert.Throws<ArgumentException>(() => driver.Tick(s => s with { TickDuration = TimeSpan.Zero }));
    }
}
