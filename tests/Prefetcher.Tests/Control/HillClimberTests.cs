using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher.Tests;

/// <summary>The climb on its own, in virtual time: a device whose throughput is a function of L.</summary>
public sealed class HillClimberTests
{
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(250);

    [Fact]
    public void Climb_DeviceScalesTo16_DoublesFrom2To16InThreeStepsAndStaysThere()
    {
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 16));

        var steps = climb.Run(TimeSpan.FromSeconds(30));

        var grows = steps.Where(s => s.Step.Kind == Grow).Select(s => s.Step.Concurrency).Take(4).ToList();
        Assert.Equal([4, 8, 16, 32], grows);
        Assert.Contains(steps, s => s.Step.Reason == "grow: +100% MB/s at L=4 over 2, slow start: probing 8");
        // 32 readers deliver what 16 do: the knee is 16, and L goes back there, leaving it only
        // for probes a fine step either side.
        var back = steps.First(s => s.Step.Reason.StartsWith("hold: L=32 gained +0% < 5% over 16, back to 16", StringComparison.Ordinal));
        var reached = steps.First(s => s.Step.Concurrency == 16).At;
        Assert.True(reached <= TimeSpan.FromSeconds(4), $"L=16 only at {reached}");
        Assert.All(steps.Where(s => s.At > back.At + TimeSpan.FromSeconds(1)), s => Assert.Contains(s.Step.Concurrency, new[] { 13, 16, 20 }));
        Assert.False(climb.Climber.InSlowStart);
    }

    [Fact]
    public void Climb_DoublingPaysOnlyHalfAtASharpKnee_KeepsItTriesAFineStepUpThenProbesDownToTheKnee()
    {
        // Linear to 12: 8 -> 16 gains +50% of a proportional +100%. 16 paid, so it stays, and a
        // fine step up (20) is tried at once; it gains nothing, so L goes back to 16 for the
        // plateau. Then the probes look down, keep each step that costs nothing, and stop at the
        // fine step nearest the knee.
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 12));

        var steps = climb.Run(TimeSpan.FromSeconds(40));

        var kept = steps.First(s => s.Step.Reason == "grow: +50% MB/s at L=16 over 8, short of 75% of the proportional gain: L=16 stays, probing 20");
        var back = steps.First(s => s.Step.Reason == "hold: L=20 gained +0% < 5%, back to 16");
        Assert.True(back.At - kept.At <= TimeSpan.FromSeconds(1.5), $"the step up was judged {back.At - kept.At} after it");
        var plateauEnd = back.At + new ControllerOptions().PlateauTime;
        Assert.All(steps.Where(s => s.At >= back.At && s.At < plateauEnd), s => Assert.Equal(16, s.Step.Concurrency));
        Assert.Contains(steps, s => s.At >= plateauEnd && s.Step.Reason.StartsWith("cut: probing L=13", StringComparison.Ordinal));
        Assert.Contains(steps, s => s.Step.Reason == "hold: L=10 delivered -17% vs L=13, back to 13");
        Assert.InRange(steps[^1].Step.Concurrency, 12, 13);
    }

    [Fact]
    public void Climb_DoublingPaysOnlyHalfOnAGradualBend_KeepsTheDoubling()
    {
        // A real disk behind the CPU work of reading bends gradually (here 4 -> 8 +92%, 8 -> 16
        // +47%, 16 -> 32 +6%). 8 -> 16 puts a sharp knee at 12, which delivers 10% less than 16;
        // going back to 12 and climbing by one held it there, as 13 gains only +4%. 16 stays, and
        // the fine step up that follows (20, +4%) goes back to it.
        var climb = new ClimbDriver(l => 60e6 * l / Math.Pow(1 + Math.Pow(l / 12.0, 4), 0.25));

        var steps = climb.Run(TimeSpan.FromSeconds(14));

        var kept = steps.First(s => s.Step.Reason.StartsWith("grow: +4", StringComparison.Ordinal) && s.Step.Reason.Contains("MB/s at L=16 over 8, short of 75%", StringComparison.Ordinal));
        Assert.True(kept.At <= TimeSpan.FromSeconds(6), $"L=16 judged only at {kept.At}");
        var back = steps.First(s => s.Step.Reason == "hold: L=20 gained +4% < 5%, back to 16");
        Assert.All(steps.Where(s => s.At >= kept.At && s.At < back.At), s => Assert.Equal(20, s.Step.Concurrency));
        Assert.All(steps.Where(s => s.At >= back.At), s => Assert.Equal(16, s.Step.Concurrency));
    }

    [Fact]
    public void Climb_DoublingPaysShortOfSlowStartsShare_EndsSlowStartOnAQuickCallAndStepsOnUp()
    {
        // L / (1 + L / 10): 2 -> 4 gains +71%, short of 75% of +100% but far above the minimum.
        // The call only turns doublings into fine steps that go on up at once, so it need not
        // wait the full second a call that stops growth does (uniform documents on the network
        // disk sat at L=16 for 1.2 s of a 6.4 s read waiting for it).
        var climb = new ClimbDriver(l => 60e6 * l / (1 + (l / 10.0))) { ReadsPerTick = 40 };

        var steps = climb.Run(TimeSpan.FromSeconds(4));

        var doubled = steps.First(s => s.Step.Reason.StartsWith("grow: slow start, probing L=4", StringComparison.Ordinal));
        var verdict = steps.First(s => s.Step.Reason == "grow: +71% MB/s at L=4 over 2, short of 75% of the proportional gain: L=4 stays, probing 5");
        Assert.True(verdict.At - doubled.At < new ControllerOptions().MeasureTime, $"judged {verdict.At - doubled.At} after the step");
        Assert.DoesNotContain(steps.Where(s => s.At < verdict.At), s => s.Step.Reason.EndsWith("growth stops only on a full measurement", StringComparison.Ordinal));
    }

    [Fact]
    public void Climb_FirstTickJustShortOfSlowStartsShareAfterALinearDoubling_GoesOnAtOnce()
    {
        // 4 -> 8 scales linearly; each reader past 8 adds 0.72 of one, so 8 -> 16 gains +72%,
        // within its error of slow start's +75%. On skewed sizes the first tick errs low (rare
        // giants: +70-81% on it, +88% by the fixed-L sweep), so after a doubling that scaled
        // almost linearly such a tick goes on at once instead of settling for another tick or,
        // the call unclear, for a second.
        var climb = new ClimbDriver(l => 60e6 * (l <= 8 ? l : 8 + ((l - 8) * 0.72))) { ReadsPerTick = 40, ReadJitter = 0.3 };

        var steps = climb.Run(TimeSpan.FromSeconds(3));

        var doubled = steps.First(s => s.Step.Reason.StartsWith("grow: +100% MB/s at L=8 over 4, slow start: probing 16", StringComparison.Ordinal));
        var next = steps.First(s => s.At > doubled.At && s.Step.Kind != Hold);
        Assert.Equal("grow: +72% MB/s at L=16 over 8 (on its first tick, within its error of 75% of the proportional gain), slow start: probing 32", next.Step.Reason);
        Assert.Equal(doubled.At + Tick, next.At);
    }

    [Fact]
    public void Climb_FirstTickFarShortOfSlowStartsShare_SettlesEvenAfterALinearDoubling()
    {
        // Linear to 12, then flat: 8 -> 16 gains +50%, far short of +75% however the first tick
        // errs, so it settles and the slow start ends on the settled call. Few, jittery reads
        // make half the error of that call (0.27) larger than the shortfall (0.25): the floor on
        // the gain, not the error, keeps it from going on.
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 12)) { ReadsPerTick = 24, ReadJitter = 0.9 };

        var steps = climb.Run(TimeSpan.FromSeconds(8));

        var doubled = steps.First(s => s.Step.Reason.StartsWith("grow: +100% MB/s at L=8 over 4, slow start: probing 16", StringComparison.Ordinal));
        Assert.Equal("hold: settling at L=16 (probe up from 8)", steps.First(s => s.At > doubled.At).Step.Reason);
        Assert.DoesNotContain(steps, s => s.Step.Reason.Contains("on its first tick", StringComparison.Ordinal));
        Assert.Contains(steps, s => s.Step.Reason.StartsWith("grow: +50% MB/s at L=16 over 8, short of 75% of the proportional gain", StringComparison.Ordinal));
    }

    [Fact]
    public void Climb_DoublingFarPastASharpKnee_WaitsForAFullMeasurementBeforeLookingDown()
    {
        // Linear to 9: 8 -> 16 gains +13%, which points to a sharp knee at 9 or 10, far below 16.
        // That call sends L down, so it waits for a full measurement.
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 9)) { ReadsPerTick = 40 };

        var steps = climb.Run(TimeSpan.FromSeconds(8));

        var doubled = steps.First(s => s.Step.Reason.StartsWith("grow: +100% MB/s at L=8 over 4, slow start: probing 16", StringComparison.Ordinal));
        var verdict = steps.First(s => s.Step.Reason.Contains("MB/s at L=16 over 8, short of 75% of the proportional gain, far past a sharp knee's", StringComparison.Ordinal));
        Assert.Contains(steps, s => s.At > doubled.At && s.At < verdict.At && s.Step.Reason.EndsWith("growth stops only on a full measurement", StringComparison.Ordinal));
        Assert.True(verdict.At - doubled.At >= new ControllerOptions().MeasureTime, $"judged {verdict.At - doubled.At} after the step");
    }

    [Fact]
    public void Climb_DoublingFarPastASharpKneeOntoTheLimit_HoldsThereOnAQuickCall()
    {
        // The same device with a limit of 16: 8 -> 16 lands on it, so the +13% call cannot send L
        // down to a knee, only hold a plateau at the limit. It is the largest L the climb may use
        // either way, so a wrong call costs nothing and need not wait for a full measurement.
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 9)) { ReadsPerTick = 40, Limit = 16 };

        var steps = climb.Run(TimeSpan.FromSeconds(8));

        var doubled = steps.First(s => s.Step.Reason.StartsWith("grow: +100% MB/s at L=8 over 4, slow start: probing 16", StringComparison.Ordinal));
        var verdict = steps.First(s => s.Step.Reason.StartsWith("hold: +1", StringComparison.Ordinal)
            && s.Step.Reason.EndsWith("MB/s at L=16 over 8, short of 75% of the proportional gain: L=16 stays, at limit 16", StringComparison.Ordinal));
        Assert.True(verdict.At - doubled.At < new ControllerOptions().MeasureTime, $"judged {verdict.At - doubled.At} after the step");
        Assert.DoesNotContain(steps.Where(s => s.At < verdict.At), s => s.Step.Reason.EndsWith("growth stops only on a full measurement", StringComparison.Ordinal));
        Assert.DoesNotContain(steps, s => s.Step.Reason.Contains("far past a sharp knee", StringComparison.Ordinal));
    }

    [Fact]
    public void Climb_DoublingCutShortByTheLimitPaysItsShareUnderFivePercent_HoldsThereOnAQuickCall()
    {
        // Linear to 32, then 0.96 of a reader's worth for one more, with a limit of 33: slow
        // start's last step is 32 -> 33, whose share of the proportional gain is +2.3%. It gains
        // +3%, under the 5% a fine step must gain, but it paid its share, so L holds at the limit:
        // a call that does not stop growth, so it need not wait for a full measurement. The reads'
        // jitter keeps the first tick's call from being clear, so the settled call decides.
        var climb = new ClimbDriver(l => 60e6 * (l <= 32 ? l : 32 + ((l - 32) * 0.96))) { ReadsPerTick = 40, Limit = 33, ReadJitter = 0.025 };

        var steps = climb.Run(TimeSpan.FromSeconds(6));

        var doubled = steps.First(s => s.Step.Reason.StartsWith("grow: +100% MB/s at L=32 over 16, slow start: probing 33", StringComparison.Ordinal));
        var verdict = steps.First(s => s.Step.Reason.StartsWith("hold: +", StringComparison.Ordinal)
            && s.Step.Reason.EndsWith("MB/s at L=33 over 32, at limit 33", StringComparison.Ordinal));
        Assert.True(verdict.At - doubled.At < new ControllerOptions().MeasureTime, $"judged {verdict.At - doubled.At} after the step");
        Assert.DoesNotContain(steps.Where(s => s.At < verdict.At), s => s.Step.Reason.EndsWith("growth stops only on a full measurement", StringComparison.Ordinal));
        Assert.All(steps.Where(s => s.At >= verdict.At), s => Assert.Equal(33, s.Step.Concurrency));
    }

    [Fact]
    public void Climb_EveryDoublingStillGainsAFifth_GrowsOnInFineStepsWithoutAPlateau()
    {
        // L / (1 + L / 10): no knee, each doubling past 8 gains 13-40% (the real machine read
        // growing documents so: L=16 324, 32 429, 64 502 MB/s). Slow start ends at the first
        // doubling short of 75%; keeping it and resting on a plateau held L at 4 for 10 s, and +1
        // steps could not show 5% past L=16.
        var climb = new ClimbDriver(l => 60e6 * l / (1 + (l / 10.0)));

        var steps = climb.Run(TimeSpan.FromSeconds(15));

        Assert.Contains(steps, s => s.Step.Reason == "grow: +71% MB/s at L=4 over 2, short of 75% of the proportional gain: L=4 stays, probing 5");
        Assert.DoesNotContain(steps, s => s.Step.Reason.StartsWith("hold: plateau", StringComparison.Ordinal) && s.Step.Concurrency < 31);
        var reached = steps.First(s => s.Step.Concurrency >= 31).At;
        Assert.True(reached <= TimeSpan.FromSeconds(11), $"L=31 only at {reached}");
        Assert.True(steps[^1].Step.Concurrency >= 50, $"L={steps[^1].Step.Concurrency} at the end");
    }

    [Fact]
    public void Climb_StepPaysFarLessThanInProportion_ProbesTheKneeItPointsToAndStaysNearIt()
    {
        // Capped at 5 readers' worth: 4 -> 8 gains +25%, so a sharp knee would be at 5 and 8 is
        // 1.6x past it. Kept for a plateau, the extra readers only queued for 10 s.
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 5));

        var kept = climb.Run(TimeSpan.FromSeconds(4)).Single(s => s.Step.Reason.StartsWith("hold: +25% MB/s at L=8 over 4", StringComparison.Ordinal));
        var probe = climb.Run(TimeSpan.FromSeconds(1.5)).Single(s => s.Step.Kind == Cut);
        // While the knee is measured, the queueing rule leaves the cut to it, however long ago L changed.
        var vetoed = climb.Climber.QueueingCutTo(5, to: 3, climb.Now, changedAt: TimeSpan.Zero) is null;
        var after = climb.Run(TimeSpan.FromSeconds(12));

        Assert.Equal("hold: +25% MB/s at L=8 over 4, short of 75% of the proportional gain, far past a sharp knee's 5: measuring L=8 again, then probing down", kept.Step.Reason);
        Assert.Equal("cut: probing L=5 (L=8 delivers 300 MB/s; a sharp knee would be there)", probe.Step.Reason);
        Assert.True(vetoed);
        Assert.Contains(after, s => s.Step.Reason == "hold: L=4 delivered -20% vs L=5, back to 5");
        Assert.All(after, s => Assert.InRange(s.Step.Concurrency, 4, 6));
    }

    [Fact]
    public void Climb_KneeAStepPointedToIsNotThere_ClimbsOnAtOnce()
    {
        // Linear to 4, then a quarter of a reader's worth for each more: 4 -> 8 gains +25%, as at
        // a sharp knee near 5, but 5 delivers 15% less than 8 and more readers keep paying.
        var climb = new ClimbDriver(l => 60e6 * (l <= 4 ? l : 4 + ((l - 4) * 0.25)));

        var steps = climb.Run(TimeSpan.FromSeconds(12));

        Assert.Contains(steps, s => s.Step.Reason == "cut: probing L=5 (L=8 delivers 300 MB/s; a sharp knee would be there)");
        Assert.Contains(steps, s => s.Step.Reason == "grow: L=5 delivered -15% vs L=8, probing L=10 (L=8 delivers 300 MB/s)");
        Assert.Contains(steps, s => s.Step.Reason == "grow: +10% MB/s at L=10 over 8, probing 13");
        Assert.DoesNotContain(steps, s => s.Step.Reason.StartsWith("hold: plateau", StringComparison.Ordinal));
    }

    [Fact]
    public void Climb_SameLDeliversMoreDuringThePlateau_DoublesAgainBeforeThePlateauEnds()
    {
        // Small documents first (their per-document work caps reading at 4 readers), then large
        // ones that a device 16 deep serves: key order reached the large documents.
        var change = TimeSpan.FromSeconds(5);
        var climb = new ClimbDriver(l => 30e6 * Math.Min(l, 4));
        var before = climb.Run(change);
        var plateau = before.Last(s => s.Step.Reason.StartsWith("hold: L=8 gained", StringComparison.Ordinal));
        Assert.Equal(4, before[^1].Step.Concurrency);

        climb.Device = l => 60e6 * Math.Min(l, 16);
        var after = climb.Run(TimeSpan.FromSeconds(10));

        var plateauEnd = plateau.At + new ControllerOptions().PlateauTime;
        var again = after.First(s => s.Step.Kind == Grow);
        Assert.True(again.At < plateauEnd, $"grew again at {again.At}, the plateau ran until {plateauEnd}: {again.Step.Reason}");
        Assert.EndsWith("MB/s at L=4 since its plateau began", again.Step.Reason, StringComparison.Ordinal);
        Assert.StartsWith("grow: slow start, probing L=8", again.Step.Reason, StringComparison.Ordinal);
        var reached = after.First(s => s.Step.Concurrency == 16).At;
        Assert.True(reached < plateauEnd, $"L=16 only at {reached}");
        Assert.InRange(after[^1].Step.Concurrency, 15, 17);
    }

    [Fact]
    public void Climb_SameLDeliversMoreLateInThePlateau_TheLastSecondShowsItBeforeThePlateauEnds()
    {
        // Six seconds into the plateau at 3 the same readers deliver 40% more. Averaged since the
        // plateau began that is +25% only after 16 s, past the plateau's 10; the last second shows it.
        (TimeSpan Plateau, List<(TimeSpan At, ControllerStep Step)> After) Run(bool reportsLastSecond)
        {
            var climb = new ClimbDriver(l => 50e6 * Math.Min(l, 3)) { ReportsLastSecond = reportsLastSecond };
            while (climb.Next().Reason != "hold: L=4 gained +0% < 5%, back to 3")
            {
            }
            var plateau = climb.Now;
            climb.Run(TimeSpan.FromSeconds(6));
            climb.Device = l => 70e6 * Math.Min(l, 3);
            return (plateau, climb.Run(TimeSpan.FromSeconds(4)));
        }

        var (plateau, after) = Run(reportsLastSecond: true);
        var (_, afterWithoutIt) = Run(reportsLastSecond: false);

        var again = after.First(s => s.Step.Kind == Grow);
        Assert.Equal("grow: slow start, probing L=6 (L=3 delivers 210 MB/s); +40% MB/s at L=3 over the last second since its plateau began", again.Step.Reason);
        Assert.InRange(again.At - plateau, TimeSpan.FromSeconds(6.5), TimeSpan.FromSeconds(7.5));
        var plateauEnd = plateau + new ControllerOptions().PlateauTime;
        Assert.All(afterWithoutIt.Where(s => s.At < plateauEnd), s => Assert.Equal((Hold, 3), (s.Step.Kind, s.Step.Concurrency)));
    }

    [Fact]
    public void Climb_QuickCallOnAFineStepShowsALoss_MeasuresOnAndKeepsTheStepThatPays()
    {
        // 60 MB/s a reader to 40. The step from 8 to 10 pays +25%, but its first measured tick
        // dips by a fifth (a pause elsewhere): on that tick alone it gained nothing.
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 40)) { L = 8, ReadsPerTick = 40 };
        climb.Climber.Apply(ClimbEffect.RestartAfterCut, TimeSpan.Zero);
        while (climb.Next().Reason != "grow: probing L=10 (L=8 delivers 480 MB/s)")
        {
        }
        climb.Next();
        climb.Device = l => 0.8 * 60e6 * Math.Min(l, 40);
        var dip = climb.Next();
        climb.Device = l => 60e6 * Math.Min(l, 40);

        var steps = climb.Run(TimeSpan.FromSeconds(2));

        Assert.Equal("hold: measuring L=10 (probe up from 8), growth stops only on a full measurement", dip.Reason);
        var verdict = steps.First(s => s.Step.Kind != Hold);
        // Short of +25%: the measurement still holds the dip.
        Assert.Matches(@"^grow: \+1\d% MB/s at L=10 over 8, probing 13$", verdict.Step.Reason);
        Assert.DoesNotContain(steps, s => s.Step.Reason.StartsWith("hold: L=10 gained", StringComparison.Ordinal));
    }

    [Fact]
    public void Climb_FineStepAfterAShortDoublingPaysInProportion_DoublesAgainAtOnce()
    {
        // Throughput as L^0.8, a bend as gradual as the growing documents' first seconds: 2 -> 4
        // gains +74%, short of 75% of +100%, but the fine step to 5 still gains 78% of its +25%.
        var climb = new ClimbDriver(l => 30e6 * Math.Pow(l, 0.8));

        var steps = climb.Run(TimeSpan.FromSeconds(6));

        var grows = steps.Where(s => s.Step.Kind == Grow).Select(s => s.Step.Reason).Take(3).ToList();
        Assert.Equal("grow: +74% MB/s at L=4 over 2, short of 75% of the proportional gain: L=4 stays, probing 5", grows[1]);
        Assert.Equal("grow: +20% MB/s at L=5 over 4, at least 75% of the proportional gain: slow start, probing 10", grows[2]);
    }

    [Fact]
    public void Climb_ThreePayingStepsInARow_DoublesAgain()
    {
        // After a cut, growth is in fine steps; a knee that moved far away shows as fine steps that keep paying.
        var climb = new ClimbDriver(l => 60e6 * Math.Min(l, 40)) { L = 4 };
        climb.Climber.Apply(ClimbEffect.RestartAfterCut, TimeSpan.Zero);

        var steps = climb.Run(TimeSpan.FromSeconds(20));

        var grows = steps.Where(s => s.Step.Kind == Grow).Select(s => s.Step.Concurrency).Take(4).ToList();
        Assert.Equal([5, 6, 8, 16], grows);
        Assert.Contains(steps, s => s.Step.Reason == "grow: +33% MB/s at L=8 over 6, 3 steps paid: slow start, probing 16");
    }

    [Fact]
    public void Climb_ProbeGainsBelowMinimum_StepsBackAndHoldsForThePlateau()
    {
        var climb = new ClimbDriver(l => 50e6 * Math.Min(l, 3) * (l > 3 ? 1.02 : 1));

        var steps = climb.Run(TimeSpan.FromSeconds(40));

        var back = steps.FindIndex(s => s.Step.Reason == "hold: L=4 gained +2% < 5%, back to 3");
        Assert.True(back >= 0);
        var plateauEnd = steps[back].At + new ControllerOptions().PlateauTime;
        var during = steps.Skip(back + 1).TakeWhile(s => s.At < plateauEnd).ToList();
        Assert.NotEmpty(during);
        Assert.All(during, s => Assert.Equal((Hold, 3), (s.Step.Kind, s.Step.Concurrency)));
        // After the plateau the next probe looks downwards, and finds L=2 clearly worse.
        Assert.Contains(steps, s => s.At >= plateauEnd && s.Step.Reason.StartsWith("cut: probing L=2", StringComparison.Ordinal));
        Assert.Contains(steps, s => s.Step.Reason == "hold: L=2 delivered -33% vs L=3, back to 3");
    }

    [Fact]
    public void Apply_PauseDuringAPlateau_KeepsThePlateau()
    {
        var climb = new ClimbDriver(l => 50e6 * Math.Min(l, 3));
        while (climb.Next().Reason != "hold: L=4 gained +0% < 5%, back to 3")
        {
        }
        var plateauEnd = climb.Now + new ControllerOptions().PlateauTime;
        climb.Next();

        // An intermittent bottleneck elsewhere: one tick of holding, then nothing again.
        climb.Climber.Apply(ClimbEffect.Pause, climb.Now);
        var steps = climb.Run(TimeSpan.FromSeconds(15));

        var probe = steps.First(s => s.Step.Reason.Contains(": probing L=", StringComparison.Ordinal));
        Assert.True(probe.At >= plateauEnd, $"probed at {probe.At}, the plateau ran until {plateauEnd}: {probe.Step.Reason}");
        Assert.Contains(steps, s => s.Step.Reason.StartsWith("hold: plateau at L=3", StringComparison.Ordinal));
    }

    [Fact]
    public void Climb_HalfSecondTicksAfterSlowStart_ProbesDecideAfterThreeTicksOfMeasurement()
    {
        // MeasureTime (1 s) is two such ticks, too few for an error estimate: without a minimum
        // of three ticks every probe would measure on until MaxMeasureTime (4 s).
        var climb = new ClimbDriver(l => 50e6 * l) { TickDuration = TimeSpan.FromMilliseconds(500) };
        climb.Climber.Apply(ClimbEffect.RestartAfterCut, TimeSpan.Zero);

        var grows = climb.Run(TimeSpan.FromSeconds(12)).Where(s => s.Step.Kind == Grow).ToList();

        Assert.True(grows.Count >= 3, $"{grows.Count} steps up in 12 s");
        Assert.Equal("grow: +50% MB/s at L=3 over 2, probing 4", grows[1].Step.Reason);
        // Each step up: three ticks measured, after settling for twice a task's I/O time (75 ms),
        // which the tick that follows the step already covers.
        Assert.Equal(3 * climb.TickDuration, grows[1].At - grows[0].At);
    }

    [Fact]
    public void QueueingCutTo_MeasuredGainOverTheLItGoesTo_VetoesUntilItIsStale()
    {
        var climb = new ClimbDriver(l => 60e6 * l);
        climb.Run(TimeSpan.FromSeconds(5));
        var l = climb.L;

        Assert.Null(climb.Climber.QueueingCutTo(l, to: l / 2, climb.Now, climb.Now));
        Assert.Null(climb.Climber.QueueingCutTo(1, to: 1, climb.Now, climb.Now));
        // Records older than the latency window no longer count: the cut goes where it was going.
        var later = climb.Now + new ControllerOptions().LatencyBaselineWindow + TimeSpan.FromSeconds(1);
        Assert.Equal((l / 2, ""), climb.Climber.QueueingCutTo(l, to: l / 2, later, climb.Now));
    }

    [Fact]
    public void QueueingCutTo_AnLInBetweenDeliveredAsMuch_GoesOnlyThere()
    {
        // Linear to 12, flat above: slow start measures 8 and 16 (16 delivers what 12 does), the
        // fine step 20 goes back to 16, and probes down measure 13.
        var climb = new ClimbDriver(l => 50e6 * Math.Min(l, 12));
        climb.Run(TimeSpan.FromSeconds(30));
        var recent16 = 50e6 * 12;

        // From 16 to 8 the cut would lose a third; 13 delivered as much with fewer readers.
        Assert.Equal((13, "; L=13 delivered as much"), climb.Climber.QueueingCutTo(16, to: 8, climb.Now, climb.Now, recent16));
        // A device that changed: what 16 delivers in the last second is below what 8 did, so the cut goes all the way.
        Assert.Equal((8, ""), climb.Climber.QueueingCutTo(16, to: 8, climb.Now, climb.Now, recent: 300e6));
        // Nothing on record at or below where the cut would go: the fewest readers on record that delivered as much.
        Assert.Equal((13, "; L=13 delivered as much"), climb.Climber.QueueingCutTo(16, to: 4, climb.Now, climb.Now, recent16));
    }

    [Fact]
    public void QueueingCutTo_ComparesWithWhereTheCutGoesNotTheBestLInBetween()
    {
        // Bends gradually: every doubling still gains 13-40%. Two neighbours deliver about the
        // same, yet the cut to half would lose: no cut.
        var climb = new ClimbDriver(l => 60e6 * l / (1 + (l / 10.0)));
        climb.Run(TimeSpan.FromSeconds(30));
        var l = climb.L;
        var recent = 60e6 * l / (1 + (l / 10.0));

        Assert.True(l >= 16, $"climbed only to {l}");
        Assert.Null(climb.Climber.QueueingCutTo(l, to: l / 2, climb.Now, climb.Now, recent));
    }

    /// <summary>Runs the climber alone: each tick it decides at the current L, and L becomes its choice.</summary>
    private sealed class ClimbDriver(Func<int, double> bytesPerSecondAt)
    {
        /// <summary>Throughput as a function of L; tests may change it mid-run.</summary>
        public Func<int, double> Device { get; set; } = bytesPerSecondAt;

        public HillClimber Climber { get; } = new(new ControllerOptions());

        public TimeSpan TickDuration { get; init; } = Tick;

        public TimeSpan Now { get; private set; }

        public int L { get; set; } = 2;

        /// <summary>The most readers the climb may use (a size ceiling or a live limit).</summary>
        public int Limit { get; init; } = ControllerOptions.AbsoluteMaxConcurrency;

        /// <summary>
        /// Reads completed each tick (none: the climb sees only bytes per tick), all of one size and
        /// latency, with every reader busy: by Little's law they deliver <see cref="Device"/>(L).
        /// </summary>
        public int ReadsPerTick { get; init; }

        /// <summary>
        /// Reads alternate between this much more and this much less than their share of the bytes,
        /// at the same latency: the rate over a tick is unchanged, but its estimate has an error.
        /// </summary>
        public double ReadJitter { get; init; }

        /// <summary>Whether each tick also reports what the last second delivered, as the queueing evidence does.</summary>
        public bool ReportsLastSecond { get; init; }

        private readonly Queue<long> _lastSecond = new();

        public ControllerStep Next()
        {
            Now += TickDuration;
            var bytes = (long)(Device(L) * TickDuration.TotalSeconds);
            var reads = new ReadSample[ReadsPerTick];
            // Each reader completes ReadsPerTick / L reads a tick: one read's latency is L ticks / ReadsPerTick.
            Array.Fill(reads, new ReadSample(bytes / Math.Max(1, ReadsPerTick), 1, L * TickDuration / Math.Max(1, ReadsPerTick)));
            for (var i = 0; i < reads.Length; i++)
            {
                reads[i] = reads[i] with { Bytes = (long)(reads[i].Bytes * (1 + (i % 2 == 0 ? ReadJitter : -ReadJitter))) };
            }
            var signals = new ControllerSignals
            {
                Now = Now,
                TickDuration = TickDuration,
                BytesDelivered = bytes,
                Reads = reads,
                ReadsInFlightTime = ReadsPerTick > 0 ? L * TickDuration : TimeSpan.Zero,
            };
            _lastSecond.Enqueue(bytes);
            while (_lastSecond.Count * TickDuration > TimeSpan.FromSeconds(1))
            {
                _lastSecond.Dequeue();
            }
            QueueingEvidence? lastSecond = ReportsLastSecond
                ? new QueueingEvidence(1, 0, null, TimeSpan.Zero, TimeSpan.Zero, _lastSecond.Sum() / (_lastSecond.Count * TickDuration.TotalSeconds))
                : null;
            var step = Climber.Climb(signals, L, Limit, lastSecond);
            L = step.Concurrency;
            return step;
        }

        public List<(TimeSpan At, ControllerStep Step)> Run(TimeSpan duration)
        {
            var steps = new List<(TimeSpan, ControllerStep)>();
            var end = Now + duration;
            while (Now < end)
            {
                var step = Next();
                steps.Add((Now, step));
            }
            return steps;
        }
    }
}
