using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher.Tests;

/// <summary>The priority rules on their own: which one decides, and what it tells the climb.</summary>
public sealed class ControllerRulesTests
{
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(250);
    private static readonly ControllerOptions Options = new();

    private readonly ForegroundBaseline _foreground = new(Options);
    private readonly ConsumerWaitWindow _waits = new(Options.BusyConsumerWindow);
    private readonly ControllerRules _rules;
    private TimeSpan _now;

    public ControllerRulesTests() => _rules = new ControllerRules(Options, _foreground, _waits, new HillClimber(Options));

    private static QueueingEvidence Queued(double inflation) =>
        new(inflation, 2, inflation, TimeSpan.FromMilliseconds(4 * inflation), TimeSpan.FromMilliseconds(4));

    private ControllerSignals Signals(Func<ControllerSignals, ControllerSignals>? adjust = null)
    {
        _now += Tick;
        var signals = new ControllerSignals { Now = _now, TickDuration = Tick, ConsumerWaitFraction = 1, BudgetBytes = 1 << 30 };
        signals = adjust?.Invoke(signals) ?? signals;
        _waits.Observe(signals.Now, signals.TickDuration, signals.ConsumerWaitFraction);
        _foreground.Observe(signals.Now, signals.ForegroundP99);
        return signals;
    }

    private (ControllerStep Step, ClimbEffect Effect)? Apply(int l, Func<ControllerSignals, ControllerSignals>? adjust = null, QueueingEvidence? queueing = null, int limit = 64) =>
        _rules.Apply(Signals(adjust), l, limit, sizeLimited: false, changedAt: TimeSpan.Zero, queueing);

    [Fact]
    public void Apply_FirstTick_StartsAndRestartsTheClimbInSlowStart()
    {
        var first = Apply(2);

        Assert.Equal((new ControllerStep(2, Start, "start: L=2", DecisionCause.Start), ClimbEffect.RestartInSlowStart), first);
        Assert.Null(Apply(2));
    }

    [Fact]
    public void Apply_ForegroundOverTargetAndReadsQueueing_TheForegroundCutWins()
    {
        Apply(16);
        for (var i = 0; i < 3; i++)
        {
            Apply(16, s => s with { ForegroundP99 = TimeSpan.FromMilliseconds(2) });
        }

        var decision = Apply(16, s => s with { ForegroundP99 = TimeSpan.FromMilliseconds(5) }, Queued(3))!.Value;

        Assert.Equal((8, Cut, DecisionCause.Foreground, ClimbEffect.RestartAfterCut), (decision.Step.Concurrency, decision.Step.Kind, decision.Step.Cause, decision.Effect));
        Assert.True(_rules.CoolingDownForForeground(_now));
    }

    [Theory]
    [InlineData(2.2, 8)]
    [InlineData(8.0, 8)]
    public void Apply_ReadsQueueing_CutsToLOverInflationButNotBelowHalf(double inflation, int expected)
    {
        Apply(16);

        var decision = Apply(16, queueing: Queued(inflation))!.Value;

        Assert.Equal((expected, Cut, DecisionCause.Queueing, ClimbEffect.RestartProbingDown), (decision.Step.Concurrency, decision.Step.Kind, decision.Step.Cause, decision.Effect));
        // Then the cooldown holds, and the queueing rule waits for it.
        var next = Apply(expected, queueing: Queued(inflation))!.Value;
        Assert.Equal((Hold, DecisionCause.Cooldown, ClimbEffect.Pause), (next.Step.Kind, next.Step.Cause, next.Effect));
    }

    [Fact]
    public void Apply_ReadsQueueingBelowTheLimit_NoCut()
    {
        Apply(16);

        Assert.Null(Apply(16, queueing: Queued(1.9)));
    }

    [Theory]
    [InlineData(true, false)]
    [InlineData(false, true)]
    public void Apply_MemoryHighOrRateLimited_HoldsAndPausesTheClimb(bool memory, bool rate)
    {
        var cause = memory ? DecisionCause.Memory : DecisionCause.RateLimit;
        Apply(4);

        var decision = Apply(4, s => s with { MemoryHigh = memory, RateLimited = rate })!.Value;

        Assert.Equal((4, Hold, cause, ClimbEffect.Pause), (decision.Step.Concurrency, decision.Step.Kind, decision.Step.Cause, decision.Effect));
    }

    [Fact]
    public void Apply_LimitBelowL_ClampsAndRestartsTheClimb()
    {
        Apply(8);

        var decision = Apply(8, limit: 4)!.Value;

        Assert.Equal((new ControllerStep(4, Cut, "cut: limit 4", DecisionCause.Limit), ClimbEffect.Restart), decision);
    }
}
