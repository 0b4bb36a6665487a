using System.Collections.Immutable;

namespace Indexing.Prefetcher;

/// <summary>
/// Decides, once per tick, how many read tasks run concurrently (L) and how large the next task
/// should be, by running its parts in order: the input checks, the baselines, the priority rules
/// (<see cref="ControllerRules"/>), growth (<see cref="HillClimber"/>) and the history. Cuts are
/// multiplicative: a wrong cut costs seconds of regrowth, a wrong growth keeps hurting the foreground.
/// Threading: it and its parts belong to the tick loop, except <see cref="History"/>, a snapshot.
/// </summary>
internal sealed class ConcurrencyController
{
    private readonly ControllerOptions _options;
    private readonly ReadTaskSizer _taskSizer;
    private readonly ReadLatencyBaseline _latency;
    private readonly ForegroundBaseline _foreground;
    private readonly ConsumerWaitWindow _consumerWaits;
    private readonly HillClimber _climber;
    private readonly ControllerRules _rules;
    private readonly DecisionHistory _history = new();

    private TimeSpan? _lastNow;
    private int _previousConcurrency;

    // When L last changed (or the first tick): bounds how long a queueing cut waits for L to be measured.
    private TimeSpan _changedAt;

    /// <param name="options">The tuning.</param>
    /// <param name="start">
    /// Where a prefetch reading the same device alone settled (<see cref="PrefetchDevice"/>): L starts
    /// there (within <see cref="ControllerOptions.MaxConcurrency"/>; the first tick clamps it to the live
    /// limits) and is probed by fine steps, and its rate per stream sizes the first tasks. Null, or with
    /// <see cref="ControllerOptions.FixedConcurrency"/>: the initial L and slow start.
    /// </param>
    /// <param name="budgetBytes">The starting budget, which bounds the first tasks a remembered rate sizes.</param>
    public ConcurrencyController(ControllerOptions options, RememberedConcurrency? start = null, long budgetBytes = 0)
    {
        _options = options.Validate();
        if (options.FixedConcurrency is not null)
        {
            start = null;
        }

        _taskSizer = new ReadTaskSizer(options);
        _latency = new ReadLatencyBaseline(options.LatencyBaselineWindow);
        _foreground = new ForegroundBaseline(options);
        _consumerWaits = new ConsumerWaitWindow(options.BusyConsumerWindow);
        _climber = new HillClimber(options);
        _rules = new ControllerRules(options, _foreground, _consumerWaits, _climber, start);
        Concurrency = start is null ? options.InitialConcurrency : Math.Clamp(start.Concurrency, 1, options.MaxConcurrency);
        _previousConcurrency = Concurrency;
        TargetTaskBytes = options.InitialTaskBytes;
        if (start?.StreamBytesPerSecond is { } streamRate)
        {
            _taskSizer.Seed(streamRate);
            TargetTaskBytes = _taskSizer.TargetBytes(TimeSpan.Zero, Concurrency, budgetBytes);
        }
    }

    /// <summary>L to run with now.</summary>
    public int Concurrency { get; private set; }

    /// <summary>Target size of the next read task.</summary>
    public long TargetTaskBytes { get; private set; }

    /// <summary>The last decision held L on a plateau: neither neighbour paid, so L is where this device settles.</summary>
    public bool Settled { get; private set; }

    /// <summary>Bytes per second one stream read at the last decision (the task sizer's windowed maximum); null before any.</summary>
    public double? StreamBytesPerSecond { get; private set; }

    /// <summary>The last ~50 decisions that changed something, oldest first; steady holds are collapsed.</summary>
    public ImmutableArray<PrefetchDecisionEntry> History => _history.Entries;

    public ControllerDecision Decide(in ControllerSignals signals)
    {
        signals.Check(_lastNow);
        Observe(signals);
        var limit = Math.Min(_options.MaxConcurrency, signals.MaxConcurrency ?? int.MaxValue);
        // A fixed L is for measuring that L: recent sizes do not lower it (the budget still bounds what is read).
        var sizeCeiling = _options.FixedConcurrency is null ? _rules.SizeCeiling(signals) : int.MaxValue;
        var sizeLimited = sizeCeiling < limit;
        limit = Math.Min(limit, sizeCeiling);
        var before = Concurrency;
        var queueing = _latency.Judge(signals.Now);
        _climber.Observe(signals.ConsumerWaitFraction, _foreground.Learning(signals.Now, signals.ForegroundP99));
        ControllerStep step;
        if (_rules.Apply(signals, before, limit, sizeLimited, _changedAt, queueing) is { } rule)
        {
            step = rule.Step;
            if (_climber.Apply(rule.Effect, signals.Now) is { } back && back < step.Concurrency)
            {
                step = step with { Concurrency = back, Reason = $"{step.Reason}; back to {back}, L={before} was not measured" };
            }
            if (step.Kind == ControllerDecisionKind.Start && rule.Effect == ClimbEffect.RestartInSlowStart && step.Concurrency == before && before < limit
                && _climber.MeasureFirstTick(signals, before, limit) is { } probe)
            {
                step = probe with { Kind = ControllerDecisionKind.Start, Reason = $"{step.Reason}; {probe.Reason}" };
            }
        }
        else
        {
            step = _climber.Climb(signals, before, limit, queueing);
        }
        if (step.Concurrency > limit)
        {
            // A step back to where a probe started, from before the limit fell, would run readers
            // the operator has taken away.
            step = step with { Concurrency = limit, Reason = $"{step.Reason} (clamped to limit {limit})" };
        }
        _lastNow = signals.Now;
        if (step.Concurrency != before || step.Kind == ControllerDecisionKind.Start)
        {
            _changedAt = signals.Now;
        }
        _previousConcurrency = before;
        Concurrency = step.Concurrency;
        Settled = step.Kind == ControllerDecisionKind.Hold && step.Cause == DecisionCause.Plateau;
        StreamBytesPerSecond = _taskSizer.StreamBytesPerSecond(signals.Now);
        TargetTaskBytes = _taskSizer.TargetBytes(signals.Now, step.Concurrency, signals.BudgetBytes);
        var throttled = _foreground.IsOver(signals.Now, signals.ForegroundP99, out _, out _) || _rules.CoolingDownForForeground(signals.Now);
        _history.Remember(signals.Now, step, before);
        return new ControllerDecision(step.Concurrency, step.Kind, step.Reason, TargetTaskBytes, throttled);
    }

    private void Observe(in ControllerSignals s)
    {
        // This tick's reads were issued under its L or the one before. The larger divides, so that a
        // cut never shows as faster streams, which the windowed max would keep for its whole window.
        _taskSizer.Observe(s.Now, s.BytesDelivered, s.TickDuration, Math.Max(Concurrency, _previousConcurrency));
        _consumerWaits.Observe(s.Now, s.TickDuration, s.ConsumerWaitFraction);
        _latency.Observe(s.Now, s.Reads.Span, s.TickDuration, s.ReadsInFlightTime);
        _foreground.Observe(s.Now, s.ForegroundP99);
    }
}
