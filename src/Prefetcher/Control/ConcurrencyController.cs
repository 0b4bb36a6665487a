using System.Collections.Immutable;

namespace Indexing.Prefetcher;

/// <summary>
/// Decides, once per tick, how many read tasks run concurrently (L) and how large the next task
/// should be. Grows multiplicatively while doubling pays (slow start), then by a quarter; cuts
/// multiplicatively: a wrong cut costs a few seconds of regrowth, a wrong growth keeps hurting
/// foreground traffic until noticed.
/// <para>
/// Its parts, each tested on its own: <see cref="ControllerSignalChecks"/> (input checks), the
/// baselines (<see cref="ReadLatencyBaseline"/>: un-queued read latency per size class;
/// <see cref="ForegroundBaseline"/>: the foreground target; <see cref="ConsumerWaitWindow"/>: the
/// indexer's waiting; <see cref="ReadTaskSizer"/>: per-stream throughput), the priority rules
/// (<see cref="ControllerRules"/>: start, limits, foreground, queueing, holds), growth
/// (<see cref="HillClimber"/>) and <see cref="DecisionHistory"/>. This type only runs them in
/// order and keeps L.
/// </para>
/// <para>
/// Threading: <see cref="Decide"/> and the other members are for the tick loop only;
/// <see cref="History"/> is an immutable snapshot that any thread (the admin page) may read.
/// </para>
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

    private bool _started;
    private TimeSpan _lastNow;
    private int _concurrency;

    /// <summary>L in force during the tick before the current one.</summary>
    private int _previousConcurrency;

    /// <summary>When L last changed (or the first tick): bounds how long a queueing cut waits for L to be measured.</summary>
    private TimeSpan _changedAt;
    private long _targetTaskBytes;

    public ConcurrencyController(ControllerOptions options)
    {
        _options = options.Validate();
        _taskSizer = new ReadTaskSizer(options);
        _latency = new ReadLatencyBaseline(options.LatencyBaselineWindow);
        _foreground = new ForegroundBaseline(options);
        _consumerWaits = new ConsumerWaitWindow(options.BusyConsumerWindow);
        _climber = new HillClimber(options);
        _rules = new ControllerRules(options, _foreground, _consumerWaits, _climber);
        _concurrency = options.InitialConcurrency;
        _previousConcurrency = options.InitialConcurrency;
        _targetTaskBytes = options.InitialTaskBytes;
    }

    /// <summary>L to run with now (before the first tick: the initial value).</summary>
    public int Concurrency => _concurrency;

    /// <summary>Target size of the next read task (before the first tick: the initial size).</summary>
    public long TargetTaskBytes => _targetTaskBytes;

    /// <summary>Whether growth is multiplicative now (slow start).</summary>
    public bool InSlowStart => _climber.InSlowStart;

    /// <summary>The last ~50 decisions that changed something, oldest first; steady holds are collapsed.</summary>
    public ImmutableArray<ControllerHistoryEntry> History => _history.Entries;

    public ControllerDecision Decide(in ControllerSignals signals)
    {
        ControllerSignalChecks.Check(signals, _started ? _lastNow : null);
        Observe(signals);
        var limit = Math.Min(_options.MaxConcurrency, signals.MaxConcurrency ?? int.MaxValue);
        // A fixed L is for measuring that L: recent sizes do not lower it (the budget still bounds what is read).
        var sizeCeiling = _options.FixedConcurrency is null ? _rules.SizeCeiling(signals) : int.MaxValue;
        var sizeLimited = sizeCeiling < limit;
        limit = Math.Min(limit, sizeCeiling);
        var before = _concurrency;
        var queueing = _latency.Judge(signals.Now);
        _climber.Fast = signals.ConsumerWaitFraction >= HillClimber.ReadBoundWaitFraction && !_foreground.Learning(signals.Now, signals.ForegroundP99);
        ControllerStep step;
        if (_rules.Apply(signals, before, limit, sizeLimited, _changedAt, queueing) is { } rule)
        {
            step = rule.Step;
            if (_climber.Apply(rule.Effect, signals.Now) is { } back && back < step.Concurrency)
            {
                step = step with { Concurrency = back, Reason = $"{step.Reason}; back to {back}, L={before} was not measured" };
            }
            if (step.Kind == ControllerDecisionKind.Start && rule.Effect == ClimbEffect.RestartInSlowStart && step.Concurrency == before && before < limit)
            {
                if (_climber.MeasureFirstTick(signals, before, limit) is { } probe)
                {
                    step = probe with { Kind = ControllerDecisionKind.Start, Reason = $"{step.Reason}; {probe.Reason}" };
                }
            }
        }
        else
        {
            step = _climber.Climb(signals, before, limit, queueing);
        }
        if (step.Concurrency > limit)
        {
            // Every rule keeps to the limit; this guard keeps a rule that forgets (a step back
            // to where a probe started, from before the limit fell) from running readers the
            // operator has taken away.
            step = step with { Concurrency = limit, Reason = $"{step.Reason} (clamped to limit {limit})" };
        }
        _started = true;
        _lastNow = signals.Now;
        if (step.Concurrency != before || step.Kind == ControllerDecisionKind.Start)
        {
            _changedAt = signals.Now;
        }
        _previousConcurrency = before;
        _concurrency = step.Concurrency;
        _targetTaskBytes = _taskSizer.TargetBytes(signals.Now, step.Concurrency, signals.BudgetBytes);
        var throttled = _foreground.IsOver(signals.Now, signals.ForegroundP99, out _, out _) || _rules.CoolingDownForForeground(signals.Now);
        _history.Remember(signals.Now, step, before);
        return new ControllerDecision(step.Concurrency, step.Kind, step.Reason, _targetTaskBytes, throttled);
    }

    private void Observe(in ControllerSignals s)
    {
        // Reads completing in this tick were issued under its L or the one before: after a cut, the
        // old readers' reads still finish now. Per stream is the larger divisor, so a cut never
        // shows as faster streams (the windowed max would keep that for its whole window and size
        // tasks too large); after a growth it errs low for one tick, which the max ignores.
        _taskSizer.Observe(s.Now, s.BytesDelivered, s.TickDuration, Math.Max(_concurrency, _previousConcurrency));
        _consumerWaits.Observe(s.Now, s.TickDuration, s.ConsumerWaitFraction);
        _latency.Observe(s.Now, s.Reads.Span);
        _foreground.Observe(s.Now, s.ForegroundP99);
    }
}
