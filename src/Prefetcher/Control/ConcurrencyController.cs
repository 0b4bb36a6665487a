using Indexing.Storage;
using System.Collections.Immutable;
using System.Runtime.InteropServices;
using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher;

/// <summary>
/// Decides, once per tick, how many read tasks run concurrently (L) and how large the next task
/// should be. It owns the measured baselines (un-queued latency per MiB, idle foreground p99,
/// per-stream throughput), a hill-climbing state machine and a short history of decisions.
/// <para>Rules, in priority order:</para>
/// <list type="number">
/// <item>A live limit below L clamps L at once.</item>
/// <item>Foreground Gets slower than their target (factor x learned idle p99): halve L, cool down.</item>
/// <item>Read latency per MiB above its limit x its windowed minimum, with no evidence that the
/// higher L buys throughput: cut L by the queueing factor, cool down.</item>
/// <item>Hold while the indexer is the bottleneck, memory is high, a rate limit binds, or cooling down.</item>
/// <item>Otherwise hill-climb one step at a time: settle, measure mean throughput, keep a step
/// only if it pays; probe alternately up and down after each plateau.</item>
/// </list>
/// Grows by one, cuts multiplicatively: a wrong cut costs a few seconds of regrowth, a wrong
/// growth keeps hurting foreground traffic until noticed.
/// <para>
/// Threading: <see cref="Decide"/> and the other members are for the tick loop only;
/// <see cref="History"/> is an immutable snapshot that any thread (the admin page) may read.
/// </para>
/// </summary>
internal sealed class ConcurrencyController
{
    /// <summary>A median of fewer reads says little about queueing (one slow read is not a queue).</summary>
    private const int MinReadsForLatency = 3;

    private const int HistoryCapacity = 50;

    private readonly ControllerOptions _options;
    private readonly ReadTaskSizer _taskSizer;
    private readonly WindowedMin _latencyPerMiBMin;
    private readonly WindowedMin _foregroundIdleP99;
    private readonly RecentMedian _foregroundRecent = new();
    private readonly ThroughputMeasurement _measurement = new();

    /// <summary>The indexer's waiting in the ticks of the last <see cref="ControllerOptions.BusyConsumerWindow"/>.</summary>
    private readonly Queue<(TimeSpan End, TimeSpan Duration, TimeSpan Waited)> _consumerWaits = new();
    private TimeSpan _consumerWaitsDuration;
    private TimeSpan _consumerWaitsWaited;

    /// <summary>Last mean throughput measured at each L (index), for the queueing rule.</summary>
    private readonly (double BytesPerSecond, TimeSpan At)?[] _throughputAt =
        new (double, TimeSpan)?[ControllerOptions.AbsoluteMaxConcurrency + 1];

    private ControllerHistoryEntry[] _history = [];
    private Cause? _lastRecordedCause;

    private bool _started;
    private TimeSpan _lastNow;
    private int _concurrency;

    /// <summary>L in force during the tick before the current one.</summary>
    private int _previousConcurrency;

    /// <summary>When L last changed (or the first tick): bounds how long a queueing cut waits for L to be measured.</summary>
    private TimeSpan _changedAt;
    private int _lastLimit;
    private long _targetTaskBytes;
    private TimeSpan _cooldownUntil;
    private bool _cooldownIsForeground;

    private ClimbPhase _phase;
    private TimeSpan _phaseStart;
    private TimeSpan _plateauUntil;
    private int _baseConcurrency;
    private double _baseThroughput;
    private double _baseRelativeError;
    private bool _probeUpNext = true;

    public ConcurrencyController(ControllerOptions options)
    {
        _options = options.Validate();
        _taskSizer = new ReadTaskSizer(options);
        _latencyPerMiBMin = new WindowedMin(options.LatencyBaselineWindow);
        _foregroundIdleP99 = new WindowedMin(options.ForegroundBaselineWindow);
        _concurrency = options.InitialConcurrency;
        _previousConcurrency = options.InitialConcurrency;
        _lastLimit = options.MaxConcurrency;
        _targetTaskBytes = options.InitialTaskBytes;
    }

    private enum ClimbPhase
    {
        /// <summary>Measuring the current L (after a change, a hold, or during a plateau).</summary>
        Baseline,
        ProbeUp,
        ProbeDown,
    }

    /// <summary>Why a decision was made, coarser than its reason text: decides what the history keeps.</summary>
    private enum Cause
    {
        Start,
        Limit,
        Sizes,
        Foreground,
        Queueing,
        Indexer,
        Memory,
        RateLimit,
        Cooldown,
        Measure,
        Plateau,
        Probe,
    }

    /// <summary>L to run with now (before the first tick: the initial value).</summary>
    public int Concurrency => _concurrency;

    /// <summary>Target size of the next read task (before the first tick: the initial size).</summary>
    public long TargetTaskBytes => _targetTaskBytes;

    /// <summary>The last ~50 decisions that changed something, oldest first; steady holds are collapsed.</summary>
    public ImmutableArray<ControllerHistoryEntry> History =>
        ImmutableCollectionsMarshal.AsImmutableArray(Volatile.Read(ref _history));

    public ControllerDecision Decide(in ControllerSignals signals)
    {
        CheckSignals(signals);
        Observe(signals);
        var limit = Math.Min(_options.MaxConcurrency, signals.MaxConcurrency ?? int.MaxValue);
        var sizeCeiling = SizeCeiling(signals);
        var sizeLimited = sizeCeiling < limit;
        limit = Math.Min(limit, sizeCeiling);
        var before = _concurrency;
        var step = Choose(signals, limit, sizeLimited);
        if (step.Concurrency > limit)
        {
            // Every rule keeps to the limit; this guard keeps a rule that forgets (a step back
            // to where a probe started, from before the limit fell) from running readers the
            // operator has taken away.
            step = step with { Concurrency = limit, Reason = $"{step.Reason} (clamped to limit {limit})" };
        }
        _lastLimit = limit;
        _lastNow = signals.Now;
        if (step.Concurrency != before || step.Kind == Start)
        {
            _changedAt = signals.Now;
        }
        _previousConcurrency = before;
        _concurrency = step.Concurrency;
        _targetTaskBytes = _taskSizer.TargetBytes(signals.Now, step.Concurrency, signals.BudgetBytes);
        var throttled = IsForegroundOver(signals, out _, out _)
            || (_cooldownIsForeground && signals.Now < _cooldownUntil);
        Remember(signals.Now, step, before);
        return new ControllerDecision(step.Concurrency, step.Kind, step.Reason, _targetTaskBytes, throttled);
    }

    private void CheckSignals(in ControllerSignals s)
    {
        if (s.TickDuration <= TimeSpan.Zero)
        {
            throw new ArgumentException($"TickDuration must be positive (was {s.TickDuration}).", "signals");
        }
        if (_started && s.Now < _lastNow)
        {
            throw new ArgumentException($"Now went backwards ({s.Now} after {_lastNow}).", "signals");
        }
        if (s.ConsumerWaitFraction is not (>= 0 and <= 1))
        {
            throw new ArgumentException($"ConsumerWaitFraction must be in [0, 1] (was {s.ConsumerWaitFraction}).", "signals");
        }
        NotNegative(s.BytesDelivered, nameof(s.BytesDelivered));
        NotNegative(s.DocumentsDelivered, nameof(s.DocumentsDelivered));
        NotNegative(s.ReadsCompleted, nameof(s.ReadsCompleted));
        NotNegative(s.BufferedBytes, nameof(s.BufferedBytes));
        NotNegative(s.InFlightBytes, nameof(s.InFlightBytes));
        NotNegative(s.BudgetBytes, nameof(s.BudgetBytes));
        NotNegative(s.LargestRecentDocumentBytes, nameof(s.LargestRecentDocumentBytes));
        if (s.ForegroundP99 is { } p99 && p99 <= TimeSpan.Zero)
        {
            // A summary of an empty window reports a p99 of zero; taken as a measurement it would
            // become the idle baseline, make the target zero and hold L at 1 for the whole window.
            throw new ArgumentOutOfRangeException(
                "signals", p99, $"ForegroundP99 must be positive (was {p99}); pass null when the window has no samples.");
        }
        if (s.MaxConcurrency is < 1)
        {
            throw new ArgumentException($"MaxConcurrency must be at least 1 (was {s.MaxConcurrency}).", "signals");
        }
    }

    private static void NotNegative(long value, string name)
    {
        if (value < 0)
        {
            throw new ArgumentOutOfRangeException("signals", value, $"{name} must not be negative (was {value}).");
        }
    }

    private void Observe(in ControllerSignals s)
    {
        // Reads completing in this tick were issued under its L or the one before: after a cut, the
        // old readers' reads still finish now. Per stream is the larger divisor, so a cut never
        // shows as faster streams (the windowed max would keep that for its whole window and size
        // tasks too large); after a growth it errs low for one tick, which the max ignores.
        _taskSizer.Observe(s.Now, s.BytesDelivered, s.TickDuration, Math.Max(_concurrency, _previousConcurrency));
        ObserveConsumerWait(s);
        if (s.ReadLatencyPerMiB is { } latency && latency > TimeSpan.Zero && s.ReadsCompleted >= MinReadsForLatency)
        {
            _latencyPerMiBMin.Add(s.Now, latency.Ticks);
        }
        // The baseline is a minimum, and a minimum of a noisy p99 drifts low and would make the
        // target ever stricter; the median of the last three samples drops single low outliers.
        // Nothing enters it before three samples are in: a first low reading (a window with a few
        // cache hits) would otherwise set the target for the whole baseline window.
        if (s.ForegroundP99 is { } p99 && _foregroundRecent.Add(p99.Ticks) is { } median)
        {
            _foregroundIdleP99.Add(s.Now, median);
        }
    }

    private void ObserveConsumerWait(in ControllerSignals s)
    {
        var waited = s.TickDuration * s.ConsumerWaitFraction;
        _consumerWaits.Enqueue((s.Now, s.TickDuration, waited));
        _consumerWaitsDuration += s.TickDuration;
        _consumerWaitsWaited += waited;
        // A tick stays while it ends inside the window; the current one always does.
        while (_consumerWaits.Peek().End <= s.Now - _options.BusyConsumerWindow)
        {
            var old = _consumerWaits.Dequeue();
            _consumerWaitsDuration -= old.Duration;
            _consumerWaitsWaited -= old.Waited;
        }
    }

    /// <summary>Share of the ticks in the window (the current one included) the indexer spent waiting.</summary>
    private double WindowedConsumerWaitFraction() =>
        _consumerWaitsDuration > TimeSpan.Zero ? Math.Clamp(_consumerWaitsWaited / _consumerWaitsDuration, 0, 1) : 0;

    // sizeLimited: this tick's limit is the size ceiling (recent large documents), not the configured or live limit.
    private Step Choose(in ControllerSignals s, int limit, bool sizeLimited)
    {
        var now = s.Now;
        var l = _concurrency;
        if (!_started)
        {
            _started = true;
            RestartClimb(now, probeUp: true);
            return l > limit
                ? new Step(limit, Start, $"start: L={limit} (limit {limit})", Cause.Start)
                : new Step(l, Start, $"start: L={l}", Cause.Start);
        }
        if (l > limit)
        {
            RestartClimb(now, probeUp: true);
            return sizeLimited
                ? new Step(limit, Cut, $"cut: {SizeCeilingText(s, limit)}", Cause.Sizes)
                : new Step(limit, Cut, $"cut: limit {limit}", Cause.Limit);
        }
        if (limit > _lastLimit && l == _lastLimit)
        {
            // L was pinned by the old limit: measure afresh and probe upwards, not after a plateau.
            RestartClimb(now, probeUp: true);
        }

        var inCooldown = now < _cooldownUntil;
        if (IsForegroundOver(s, out var p99, out var target))
        {
            var text = $"foreground p99 {ControlText.Duration(p99)} > {ControlText.Duration(target)}";
            if (l == 1)
            {
                return Stay($"hold: {text} at L=1", Cause.Foreground);
            }
            if (!inCooldown)
            {
                StartCooldown(now, foreground: true);
                RestartClimb(now, probeUp: true);
                return new Step(CutTo(l, _options.ForegroundCutFactor), Cut, $"cut: {text}", Cause.Foreground);
            }
        }
        if (!inCooldown && QueueingCut(s) is { } queueing)
        {
            return queueing;
        }
        if (IndexerBottleneck(s) is { } indexer)
        {
            return HoldAndRestart(now, indexer, Cause.Indexer);
        }
        if (s.MemoryHigh)
        {
            return HoldAndRestart(now, "hold: memory high", Cause.Memory);
        }
        if (s.RateLimited)
        {
            return HoldAndRestart(now, "hold: rate-limited by the max MB/s setting", Cause.RateLimit);
        }
        if (inCooldown)
        {
            return HoldAndRestart(now, $"hold: cooldown {ControlText.Duration(_cooldownUntil - now)} after cut", Cause.Cooldown);
        }
        return Climb(s, limit);
    }

    /// <summary>
    /// How recent document sizes bound L: a document is read whole, so each of L readers may hold
    /// one as large as the largest recent one in flight; L of them must fit the budget's
    /// large-document share. Small documents leave the configured ceiling in force; giants lower it.
    /// </summary>
    private int SizeCeiling(in ControllerSignals s)
    {
        if (s.LargestRecentDocumentBytes <= 0 || s.BudgetBytes <= 0)
        {
            return int.MaxValue;
        }
        var share = s.BudgetBytes * _options.LargeDocumentBudgetFraction;
        return (int)Math.Clamp(Math.Floor(share / s.LargestRecentDocumentBytes), 1, int.MaxValue);
    }

    private string SizeCeilingText(in ControllerSignals s, int ceiling) =>
        $"recent documents up to {ByteSize.Format(s.LargestRecentDocumentBytes)}: L={ceiling} of them fill " +
        $"{ControlText.Percent(_options.LargeDocumentBudgetFraction)} of the {ByteSize.Format(s.BudgetBytes)} budget";

    private bool IsForegroundOver(in ControllerSignals s, out TimeSpan p99, out TimeSpan target)
    {
        p99 = s.ForegroundP99 ?? TimeSpan.Zero;
        target = _options.ForegroundTarget
            ?? (_foregroundIdleP99.Current(s.Now) is { } idle
                ? TimeSpan.FromTicks((long)(idle * _options.ForegroundTargetFactor))
                : TimeSpan.MaxValue);
        return s.ForegroundP99 is not null && p99 > target;
    }

    private Step? QueueingCut(in ControllerSignals s)
    {
        var l = _concurrency;
        if (l <= 1 || s.ReadLatencyPerMiB is not { } latency || s.ReadsCompleted < MinReadsForLatency
            || _latencyPerMiBMin.Current(s.Now) is not { } minimumTicks)
        {
            return null;
        }
        var inflation = latency.Ticks / minimumTicks;
        if (inflation <= _options.LatencyInflationLimit)
        {
            return null;
        }
        // Latency may rise for a good reason: more parallel reads that really deliver more. Only
        // evidence of that (this L measurably beating a lower one) vetoes the cut. With a lower L
        // on record but none yet for this L, the cut waits for the measurement, but no longer than
        // one takes after L changed: every hold (memory, indexer, rate limit) restarts measuring,
        // so under holds it never comes, and waiting for it let reads queue until the lower L's
        // record expired. Keeping the measurement across holds instead would mix app-limited
        // ticks into it.
        if (BestThroughputBelow(l, s.Now) is { } lower
            && (CurrentThroughput(l, s.Now) is { } current
                ? current >= lower * (1 + _options.GrowthMinGain)
                : s.Now - _changedAt < _options.SettleTime + _options.MaxMeasureTime))
        {
            return null;
        }
        StartCooldown(s.Now, foreground: false);
        // L may still be too high after the cut, so the next probe looks downwards.
        RestartClimb(s.Now, probeUp: false);
        var minimum = TimeSpan.FromTicks((long)minimumTicks);
        return new Step(
            CutTo(l, _options.QueueingCutFactor),
            Cut,
            ControlText.Invariant($"cut: latency/MiB {inflation:0.0}x its minimum ({ControlText.Duration(latency)} vs {ControlText.Duration(minimum)})"),
            Cause.Queueing);
    }

    private string? IndexerBottleneck(in ControllerSignals s)
    {
        if (s.BudgetBytes <= 0)
        {
            return null;
        }
        var buffered = (double)s.BufferedBytes / s.BudgetBytes;
        if (buffered >= _options.BufferFullFraction)
        {
            return $"hold: indexer is the bottleneck (buffered {ControlText.Percent(buffered)} of budget)";
        }
        // A full buffer says so at once; a busy indexer only over the window. Right after a large
        // document lands the indexer is busy for a tick or two whatever L is; judged by that tick
        // alone, every giant held L and restarted the measurement, so growth was never measured
        // while the indexer, over a second, kept waiting for the next giant.
        var waited = WindowedConsumerWaitFraction();
        if (buffered >= _options.BusyConsumerMinBufferedFraction
            && s.ConsumerWaitFraction < _options.BusyConsumerMaxWaitFraction
            && waited < _options.BusyConsumerMaxWaitFraction)
        {
            return $"hold: indexer is the bottleneck (it waited {ControlText.Percent(waited)} " +
                $"over {ControlText.Duration(_consumerWaitsDuration)}, buffered {ControlText.Percent(buffered)} of budget)";
        }
        return null;
    }

    private Step Climb(in ControllerSignals s, int limit)
    {
        var now = s.Now;
        var l = _concurrency;
        var tickStart = now - s.TickDuration;
        if (!Reached(tickStart - _phaseStart, _options.SettleTime, s.TickDuration))
        {
            return Stay($"hold: settling at L={l}{PhaseNote()}", Cause.Measure);
        }
        _measurement.Add(s.BytesDelivered, s.TickDuration);
        // Whatever MeasureTime says, at least the ticks an error estimate needs: with long ticks a
        // measurement of fewer has an infinite error, and every probe would run to MaxMeasureTime.
        if (!Reached(_measurement.Time, _options.MeasureTime, s.TickDuration)
            || _measurement.TickCount < ThroughputMeasurement.MinTicksForError)
        {
            return Stay($"hold: measuring L={l}{PhaseNote()}", Cause.Measure);
        }
        if (now < _plateauUntil)
        {
            return Stay($"hold: plateau at L={l}, probing again in {ControlText.Duration(_plateauUntil - now)}", Cause.Plateau);
        }
        // Mean over the measurement, not a windowed max: a +5% decision needs an estimate whose
        // error is well below 5%. Per-tick rates are quantised by task completions (one 4 MiB task
        // more or less in a 250 ms tick), and the max of a few such samples is biased upwards by
        // an amount that depends on L; the mean integrates bytes over the whole interval. Holds
        // restart the measurement, so app-limited ticks do not enter it.
        var throughput = _measurement.BytesPerSecond;
        if (_phase != ClimbPhase.Baseline && !Decisive(throughput) && !Reached(_measurement.Time, _options.MaxMeasureTime, s.TickDuration))
        {
            // Lumpy reads (a 20 MB document is one 300 ms completion) make a short measurement
            // too noisy for a 5% call: measure on until the call is clear or time is up.
            return Stay($"hold: measuring L={l}{PhaseNote()}, not yet decisive", Cause.Measure);
        }
        _throughputAt[l] = (throughput, now);
        return _phase switch
        {
            ClimbPhase.ProbeUp => AfterProbeUp(now, throughput, limit),
            ClimbPhase.ProbeDown => AfterProbeDown(now, throughput, limit),
            _ => StartProbe(now, throughput, limit),
        };
    }

    private Step StartProbe(TimeSpan now, double throughput, int limit)
    {
        var l = _concurrency;
        SetBase(l, throughput);
        var delivers = $"L={l} delivers {ControlText.Rate(throughput)}";
        if (l < limit && (_probeUpNext || l == 1))
        {
            BeginMeasuring(ClimbPhase.ProbeUp, now, plateau: TimeSpan.Zero);
            return new Step(l + 1, Grow, $"grow: probing L={l + 1} ({delivers})", Cause.Probe);
        }
        if (l > 1)
        {
            BeginMeasuring(ClimbPhase.ProbeDown, now, plateau: TimeSpan.Zero);
            return new Step(l - 1, Cut, $"cut: probing L={l - 1} ({delivers})", Cause.Probe);
        }
        EnterPlateau(now, probeUpNext: true);
        return Stay($"hold: L=1 at limit 1 ({delivers})", Cause.Plateau);
    }

    private Step AfterProbeUp(TimeSpan now, double throughput, int limit)
    {
        var l = _concurrency;
        var from = _baseConcurrency;
        var gain = Gain(throughput, _baseThroughput);
        if (gain < _options.GrowthMinGain)
        {
            EnterPlateau(now, probeUpNext: false);
            return new Step(from, Hold,
                $"hold: L={l} gained {ControlText.Change(gain)} < {ControlText.Percent(_options.GrowthMinGain)}, back to {from}",
                Cause.Plateau);
        }
        SetBase(l, throughput);
        var gained = $"{ControlText.Change(gain)} MB/s at L={l}";
        if (l >= limit)
        {
            EnterPlateau(now, probeUpNext: false);
            return Stay($"hold: {gained}, at limit {limit}", Cause.Plateau);
        }
        BeginMeasuring(ClimbPhase.ProbeUp, now, plateau: TimeSpan.Zero);
        return new Step(l + 1, Grow, $"grow: {gained} over {from}, probing {l + 1}", Cause.Probe);
    }

    private Step AfterProbeDown(TimeSpan now, double throughput, int limit)
    {
        var l = _concurrency;
        var from = _baseConcurrency;
        var change = $"{ControlText.Change(Gain(throughput, _baseThroughput))} vs L={from}";
        // The same test as growing, seen from below: if going back up would not gain the minimum,
        // the smaller L is as good and is kept (fewer reads queued, less foreground impact).
        if (throughput * (1 + _options.GrowthMinGain) <= _baseThroughput)
        {
            EnterPlateau(now, probeUpNext: true);
            // The limit may have fallen to this L while it was measured: then the step back is not ours to take.
            return from > limit
                ? Stay($"hold: L={l} delivered {change}, stays at limit {limit}", Cause.Plateau)
                : new Step(from, Hold, $"hold: L={l} delivered {change}, back to {from}", Cause.Plateau);
        }
        SetBase(l, throughput);
        if (l == 1)
        {
            EnterPlateau(now, probeUpNext: true);
            return Stay($"hold: L=1 delivers {change}", Cause.Plateau);
        }
        BeginMeasuring(ClimbPhase.ProbeDown, now, plateau: TimeSpan.Zero);
        return new Step(l - 1, Cut,
            $"cut: L={l} delivers {change}, +1 is not worth {ControlText.Percent(_options.GrowthMinGain)}, probing {l - 1}",
            Cause.Probe);
    }

    /// <summary>
    /// Whether the step's gain (for a downward probe: the gain going back up would bring) is
    /// clear of the minimum by two standard errors of the two measurements combined.
    /// </summary>
    private bool Decisive(double throughput)
    {
        var gain = _phase == ClimbPhase.ProbeDown ? Gain(_baseThroughput, throughput) : Gain(throughput, _baseThroughput);
        var error = Math.Sqrt((_measurement.RelativeError * _measurement.RelativeError) + (_baseRelativeError * _baseRelativeError));
        return Math.Abs(gain - _options.GrowthMinGain) >= 2 * error;
    }

    private void SetBase(int concurrency, double throughput)
    {
        _baseConcurrency = concurrency;
        _baseThroughput = throughput;
        _baseRelativeError = _measurement.RelativeError;
    }

    private string PhaseNote() => _phase switch
    {
        ClimbPhase.ProbeUp => $" (probe up from {_baseConcurrency})",
        ClimbPhase.ProbeDown => $" (probe down from {_baseConcurrency})",
        _ => "",
    };

    /// <summary>Measurements and settling are counted in whole ticks, so a target is met within half a tick.</summary>
    private static bool Reached(TimeSpan elapsed, TimeSpan target, TimeSpan tick) => elapsed + (tick / 2) >= target;

    private static double Gain(double throughput, double baseline) =>
        baseline > 0 ? (throughput / baseline) - 1 : (throughput > 0 ? 1 : 0);

    /// <summary>Multiplicative cut, but always at least one step and never below one reader.</summary>
    private static int CutTo(int l, double factor) => Math.Max(1, Math.Min(l - 1, (int)(l * factor)));

    private double? CurrentThroughput(int l, TimeSpan now) =>
        _measurement.Time > TimeSpan.Zero ? _measurement.BytesPerSecond : FreshThroughput(l, now);

    private double? BestThroughputBelow(int l, TimeSpan now)
    {
        double? best = null;
        for (var lower = 1; lower < l; lower++)
        {
            if (FreshThroughput(lower, now) is { } value && (best is null || value > best))
            {
                best = value;
            }
        }
        return best;
    }

    private double? FreshThroughput(int l, TimeSpan now) =>
        _throughputAt[l] is { } entry && now - entry.At < _options.LatencyBaselineWindow ? entry.BytesPerSecond : null;

    private void StartCooldown(TimeSpan now, bool foreground)
    {
        _cooldownUntil = now + _options.CooldownAfterCut;
        _cooldownIsForeground = foreground;
    }

    private void RestartClimb(TimeSpan now, bool probeUp)
    {
        _probeUpNext = probeUp;
        BeginMeasuring(ClimbPhase.Baseline, now, plateau: TimeSpan.Zero);
    }

    private void EnterPlateau(TimeSpan now, bool probeUpNext)
    {
        _probeUpNext = probeUpNext;
        BeginMeasuring(ClimbPhase.Baseline, now, _options.PlateauTime);
    }

    private void BeginMeasuring(ClimbPhase phase, TimeSpan now, TimeSpan plateau)
    {
        _phase = phase;
        _phaseStart = now;
        _plateauUntil = now + plateau;
        _measurement.Reset();
    }

    private Step Stay(string reason, Cause cause) => new(_concurrency, ControllerDecisionKind.Hold, reason, cause);

    /// <summary>
    /// A hold for an outside reason: what is measured now says nothing about L, so measuring starts
    /// over. L stays, so a plateau in progress does too: dropping it made an intermittent indexer
    /// bottleneck (one hold tick every few seconds) start a probe after every hold.
    /// </summary>
    private Step HoldAndRestart(TimeSpan now, string reason, Cause cause)
    {
        var plateauLeft = _plateauUntil > now ? _plateauUntil - now : TimeSpan.Zero;
        BeginMeasuring(ClimbPhase.Baseline, now, plateauLeft);
        return Stay(reason, cause);
    }

    /// <summary>
    /// Keeps every change of L and the first of a run of holds with the same cause, so ~50 entries
    /// cover minutes of history instead of 12 s of identical ticks. Settling/measuring holds are
    /// implied by the step before them and not kept.
    /// </summary>
    private void Remember(TimeSpan now, Step step, int before)
    {
        if (step.Cause == Cause.Measure
            || (step.Kind == ControllerDecisionKind.Hold && step.Concurrency == before && step.Cause == _lastRecordedCause))
        {
            return;
        }
        _lastRecordedCause = step.Cause;
        var old = _history;
        var keep = Math.Min(old.Length, HistoryCapacity - 1);
        var next = new ControllerHistoryEntry[keep + 1];
        Array.Copy(old, old.Length - keep, next, 0, keep);
        next[keep] = new ControllerHistoryEntry(now, step.Concurrency, step.Kind, step.Reason);
        Volatile.Write(ref _history, next);
    }

    private readonly record struct Step(int Concurrency, ControllerDecisionKind Kind, string Reason, Cause Cause);

    /// <summary>Median of the last three values; null until three are in (one or two say nothing about outliers).</summary>
    private sealed class RecentMedian
    {
        private readonly double[] _last = new double[3];
        private int _next;
        private int _filled;

        public double? Add(double value)
        {
            _last[_next] = value;
            _next = (_next + 1) % 3;
            _filled = Math.Min(_filled + 1, 3);
            if (_filled < 3)
            {
                return null;
            }
            var (a, b, c) = (_last[0], _last[1], _last[2]);
            return Math.Max(Math.Min(a, b), Math.Min(Math.Max(a, b), c));
        }
    }
}
