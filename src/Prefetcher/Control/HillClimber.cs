using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher;

/// <summary>
/// The controller's growth: when no rule decides, it measures the mean throughput at the current
/// L and probes a neighbour, keeping a step only if it pays.
/// <para>
/// Two regimes, as in TCP. <b>Slow start</b> (from the first tick, after a raised limit that pinned
/// L, after <see cref="PayingStepsForSlowStart"/> paying fine steps, or after one fine step that
/// paid as a doubling must): L doubles while each doubling delivers
/// <see cref="SlowStartEfficiency"/> of the proportional gain, so a device 16 deep is reached
/// from 2 in three steps instead of fourteen. The first step that pays less ends
/// it; one that still gains <see cref="ControllerOptions.GrowthMinGain"/> stays, and the climb goes
/// on at once (at the limit: a plateau there), or, if L is far past the knee its gain points to,
/// measures L again and probes down to that knee. <b>Fine steps</b>
/// from then on, and after any cut: keep a step up only if it gains the minimum, and go on up; after
/// one that does not, go back and probe alternately down and up after each plateau.
/// </para>
/// <para>
/// Files: this one (state, measuring, the queueing rule's veto); HillClimber.Probes.cs (what a
/// finished measurement decides); <see cref="ThroughputRecord"/> (what each L delivered). Not
/// thread-safe: owned by the controller's tick loop.
/// </para>
/// </summary>
internal sealed partial class HillClimber(ControllerOptions options)
{
    /// <summary>A multiplicative step continues slow start only if it gains at least this share of its proportional gain.</summary>
    public const double SlowStartEfficiency = 0.75;

    /// <summary>Paying fine steps in a row after which slow start doubles again: the knee has moved away.</summary>
    public const int PayingStepsForSlowStart = 3;

    /// <summary>
    /// Outside slow start L steps by this factor (at least one reader), up or down: the size of a
    /// queueing cut, so the minimum gain asks the same of every L (one reader more at a high L could
    /// not show it).
    /// </summary>
    public const double FineStepFactor = 1.25;

    /// <summary>
    /// A step that ends slow start leaving L below the limit and more than this multiple of the knee
    /// its gain points to (where linear scaling would have delivered as much) measures L once more,
    /// then probes down to that knee (lower if reads queue), unless paying fine steps restarted slow
    /// start: they have seen the device bend gradually below.
    /// </summary>
    public const double KneeOvershoot = 1.5;

    /// <summary>
    /// A probe down to that knee keeps it unless going back up gains this much: below a gradual bend
    /// it delivers clearly less, at a sharp one as much give or take measuring error, and this sits
    /// between the two (docs/decisions/0002-knee-rule.md).
    /// </summary>
    public const double KneeProbeMinGain = 0.10;

    /// <summary>
    /// Reads taking at least this multiple of their un-queued time (in most size classes) make a
    /// downward probe go to where they would not queue, not one step down.
    /// </summary>
    public const double QueuedInflation = 1.25;

    /// <summary>A first step taken at the first tick multiplies L by this: the initial L is low for the foreground's sake, not measured.</summary>
    public const int FirstStepFactor = 4;

    /// <summary>
    /// The indexer waiting at least this share of a tick for reads makes the climb <see cref="Fast"/>.
    /// Half, not all of it: while reads starve the indexer, a batch that lands (giants on a slow disk)
    /// keeps it busy for part of a tick, and the first tick also holds its own start and first batch.
    /// A share near all of it left such ticks stalling the climb while the indexer starved (see
    /// benchmarks/results/README.md, "Controller vs BestFixed").
    /// A step taken wrongly is undone by the indexer hold that follows.
    /// </summary>
    public const double ReadBoundWaitFraction = 0.5;

    /// <summary>A plateau's L delivering this much more than when it began ends the plateau with a new slow start.</summary>
    public const double PlateauRise = 0.25;

    /// <summary>In slow start, this many reads issued since a step (their rate by Little's law) decide it before three ticks are in.</summary>
    public const int MinReadsForEarlyCall = 8;

    private readonly ControllerOptions _options = options.Validate();
    private readonly ThroughputMeasurement _measurement = new();

    /// <summary>Last mean throughput measured at each L, for downward probes and the queueing rule's veto.</summary>
    private readonly ThroughputRecord _record = new(options.LatencyBaselineWindow);

    private Phase _phase;
    private TimeSpan _phaseStart;
    private TimeSpan _plateauUntil;
    private int _baseConcurrency;
    private double _baseThroughput;
    private double _baseRelativeError;
    private bool _probeUpNext = true;

    /// <summary>A knee far below L that slow start's last step pointed to: the next probe down goes there.</summary>
    private int? _knee;

    /// <summary>The L a first step taken unjudged (too few reads for a rate) came from, until L is measured: a hold goes back there.</summary>
    private int? _unjudgedFrom;
    private int _payingSteps;

    /// <summary>
    /// Fine steps since slow start ended on a short doubling, with no cut since: one that pays in
    /// proportion doubles again. After a cut they stay fine: the foreground's limit shows only as cuts.
    /// </summary>
    private bool _uncutSinceSlowStart;

    /// <summary>
    /// Something in this slow start showed the device delivering more (a doubling or the fine steps
    /// that restarted it paid, or L delivered more over a plateau): a limit that stops it then says
    /// nothing about where the device bends, so L holds there. Not when the limit is reached before
    /// any of that (the initial L, or a first step not yet judged): then L probes down as usual.
    /// </summary>
    private bool _slowStartPaid;

    /// <summary>
    /// The share of its proportional gain the last doubling of this slow start paid (0: none yet).
    /// At <see cref="ClearDoublingShare"/> or more, the next doubling's first tick needs only not to
    /// fall clearly short (<see cref="EarlyDoubling"/>).
    /// </summary>
    private double _lastDoublingShare;

    /// <summary>
    /// A doubling that paid this share of its proportional gain (the device scaled almost linearly
    /// up to it) lets the next one go on on its first tick unless clearly short.
    /// </summary>
    private const double ClearDoublingShare = 0.9;

    /// <summary>How far short of slow start's share a first tick after such a doubling may fall and still go on.</summary>
    private const double FirstTickShortfall = 0.15;

    private TimeSpan _settle = options.SettleTime;

    private enum Phase
    {
        /// <summary>Measuring the current L (after a change, a hold, or during a plateau).</summary>
        Baseline,
        ProbeUp,
        ProbeDown,
    }

    /// <summary>
    /// Reads are the bottleneck (the indexer waited) and the foreground's idle p99 is not being
    /// learned (it would be learned under the load, and laxer); set by <see cref="Observe"/>. Only
    /// then does slow start step at the first tick and judge a step on its first tick and on few reads.
    /// </summary>
    public bool Fast { get; private set; } = true;

    // Whether the last tick's indexer wait alone made reads the bottleneck (what Fast lacked, if it did).
    private bool _readBound = true;

    /// <summary>Whether growth is multiplicative now.</summary>
    public bool InSlowStart { get; private set; } = true;

    /// <summary>Sets <see cref="Fast"/> from one tick's signals; call every tick, before the rules.</summary>
    public void Observe(double consumerWaitFraction, bool foregroundLearning)
    {
        _readBound = consumerWaitFraction >= ReadBoundWaitFraction;
        Fast = _readBound && !foregroundLearning;
    }

    /// <summary>
    /// Applies what a rule's decision means for the climb. Returns the L to go back to when a hold
    /// interrupted a doubling not yet measured: the hold says more readers cannot help now, and
    /// kept, the doubling would stay unjudged for as long as the hold lasts; null otherwise.
    /// </summary>
    public int? Apply(ClimbEffect effect, TimeSpan now)
    {
        switch (effect)
        {
            case ClimbEffect.None:
                return null;
            case ClimbEffect.Pause:
                int? back = _phase == Phase.ProbeUp && InSlowStart ? _baseConcurrency : _unjudgedFrom;
                _unjudgedFrom = null;
                // What is measured now says nothing about L, so measuring starts over. L stays, so a
                // plateau in progress does too, or an intermittent hold would start a probe each time.
                BeginMeasuring(Phase.Baseline, now, RemainingPlateau(now));
                return back;
            case ClimbEffect.RestartInSlowStart:
                InSlowStart = true;
                _slowStartPaid = false;
                _lastDoublingShare = 0;
                break;
            case ClimbEffect.RestartAfterCut or ClimbEffect.RestartProbingDown or ClimbEffect.StartRemembered:
                LeaveSlowStart();
                break;
        }
        _payingSteps = 0;
        _knee = null;
        _unjudgedFrom = null;
        _probeUpNext = effect != ClimbEffect.RestartProbingDown;
        // A limit that cuts L during a plateau says nothing about the device: the plateau goes on
        // at the limit. Dropping it probed down from the limit at once, what a plateau at the limit
        // is there to prevent.
        var plateau = effect == ClimbEffect.Restart ? RemainingPlateau(now) : TimeSpan.Zero;
        // At the start nothing is in flight, and a raised limit only adds readers: the settle of a
        // step up. A first doubling that comes before the indexer shows it is the bottleneck is
        // undone by the hold that follows (Pause).
        BeginMeasuring(Phase.Baseline, now, plateau, grew: effect is ClimbEffect.RestartInSlowStart or ClimbEffect.StartRemembered);
        return null;
    }

    /// <summary>
    /// Measures the first tick too (its reads were issued at the initial L from the start) and, if
    /// <see cref="Fast"/>, steps x<see cref="FirstStepFactor"/> at once. Otherwise a hold at L
    /// saying why the step waits (null: at the limit). Call on the first tick, after <see cref="Apply"/>.
    /// </summary>
    public ControllerStep? MeasureFirstTick(in ControllerSignals s, int l, int limit)
    {
        BeginMeasuring(Phase.Baseline, s.Now - s.TickDuration, plateau: TimeSpan.Zero, grew: true);
        _measurement.Add(s.BytesDelivered, s.TickDuration, s.Reads.Span, s.ReadsInFlightTime, issuedFrom: _phaseStart, tickEnd: s.Now, settled: false);
        if (l >= limit)
        {
            return null;
        }
        if (!Fast)
        {
            var why = !_readBound
                ? $"the indexer waited {ControlText.Percent(s.ConsumerWaitFraction)} of the tick, not {ControlText.Percent(ReadBoundWaitFraction)}"
                : "the foreground's idle p99 is being learned";
            return Stay(l, $"measuring L={l} before growing: {why}", DecisionCause.Start);
        }
        if (_measurement.FromReads)
        {
            return StartProbe(s.Now, _measurement.BytesPerSecond, l, limit, queueing: null, FirstStepFactor);
        }
        if (s.ReadsInFlightTime <= TimeSpan.Zero || _measurement.ReadCount >= ThroughputMeasurement.MinReadsForRate)
        {
            var why = s.ReadsInFlightTime <= TimeSpan.Zero ? "no reads in flight were measured" : $"its {_measurement.ReadCount} reads gave no rate";
            return Stay(l, $"measuring L={l} before growing: {why}", DecisionCause.Start);
        }
        // Too few reads finished for a rate: they outlast a tick (slow streams), and measuring the
        // initial L would take a second of a short read. Step unjudged; slow start goes on from there.
        var next = Math.Min(limit, FirstStepFactor * l);
        BeginMeasuring(Phase.Baseline, s.Now, plateau: TimeSpan.Zero, grew: true);
        _unjudgedFrom = l;
        return new ControllerStep(next, Grow, $"grow: slow start, reads too slow to measure L={l} in a tick: L={next}", DecisionCause.Probe);
    }

    /// <summary>
    /// One tick of climbing at <paramref name="l"/>, never past <paramref name="limit"/>;
    /// <paramref name="queueing"/> (null: too few reads) guides downward probes.
    /// </summary>
    public ControllerStep Climb(in ControllerSignals s, int l, int limit, QueueingEvidence? queueing = null)
    {
        var now = s.Now;
        var tickStart = now - s.TickDuration;
        if (!Reached(tickStart - _phaseStart, _settle, s.TickDuration))
        {
            return EarlyDoubling(s, l, limit) ?? Stay(l, $"hold: settling at L={l}{PhaseNote()}", DecisionCause.Measure);
        }
        _measurement.Add(s.BytesDelivered, s.TickDuration, s.Reads.Span, s.ReadsInFlightTime, issuedFrom: _phaseStart, tickEnd: now);
        if (!MeasuredEnough(s.TickDuration))
        {
            return Stay(l, $"hold: measuring L={l}{PhaseNote()}", DecisionCause.Measure);
        }
        // Over the whole measurement, not a windowed max: a decision on the minimum gain needs an
        // estimate whose error is well below it (ThroughputMeasurement: from the reads by Little's law, or the
        // mean bytes per tick). Holds restart the measurement, so app-limited ticks do not enter it.
        var throughput = _measurement.BytesPerSecond;
        if (now < _plateauUntil)
        {
            // Over the plateau, or over the last second: documents that grow along key order raise
            // what L delivers steadily, and the mean since the plateau began lags seconds behind.
            var delivered = queueing?.BytesPerSecond is { } lastSecond && lastSecond > throughput ? lastSecond : throughput;
            var rose = _baseThroughput > 0 && Gain(delivered, _baseThroughput) - PlateauRise >= CombinedError();
            if (l >= limit || !rose)
            {
                return Stay(l, $"hold: plateau at L={l}, probing again in {ControlText.Duration(_plateauUntil - now)}", DecisionCause.Plateau);
            }
            // The same L delivers clearly (two standard errors) more than when the plateau began:
            // the reads changed (key order reached larger documents), and the knee may have moved
            // far away, which waiting out the plateau would not see.
            var rise = $"{ControlText.Change(Gain(delivered, _baseThroughput))} MB/s at L={l}{(delivered > throughput ? " over the last second" : "")} since its plateau began";
            InSlowStart = true;
            _slowStartPaid = true;
            _lastDoublingShare = 0;
            _probeUpNext = true;
            _plateauUntil = now;
            var probe = StartProbe(now, delivered, l, limit, queueing);
            return probe with { Reason = $"{probe.Reason}; {rise}" };
        }
        if (_phase != Phase.Baseline && !Decisive(throughput, l) && !Reached(_measurement.Time, _options.MaxMeasureTime, s.TickDuration))
        {
            // Lumpy reads (a giant document is one long completion) make a short measurement
            // too noisy for a call on the minimum gain: measure on until the call is clear or time is up.
            return Stay(l, $"hold: measuring L={l}{PhaseNote()}, not yet decisive", DecisionCause.Measure);
        }
        if (_phase == Phase.ProbeUp && !FullyMeasured(s.TickDuration) && !Reached(_measurement.Time, _options.MaxMeasureTime, s.TickDuration)
            && StopsGrowth(Gain(throughput, _baseThroughput), l, limit))
        {
            // A quick call may only keep growing (or hold at the limit). One that stops growth (a
            // step back and a plateau, or a probe down to a knee far below) costs seconds at a low
            // L when it is wrong, and calls on a tick or two of reads were wrong by more than their
            // own error said (docs/decisions/0001-slow-start-from-l2.md).
            return Stay(l, $"hold: measuring L={l}{PhaseNote()}, growth stops only on a full measurement", DecisionCause.Measure);
        }
        _record.Record(l, throughput, now);
        return _phase switch
        {
            Phase.ProbeUp => AfterProbeUp(now, throughput, l, limit),
            Phase.ProbeDown => AfterProbeDown(now, throughput, l, limit, queueing),
            _ => StartProbe(now, throughput, l, limit, queueing),
        };
    }

    /// <summary>
    /// A doubling judged on its first, unsettled tick (the reads issued since the step). Past a knee
    /// the reads completing first after a step are those that did not queue, so it errs high: it
    /// may continue slow start on a clear pass (two standard errors), or just short of one after a
    /// doubling that scaled almost linearly, never end it. Null: settle.
    /// </summary>
    private ControllerStep? EarlyDoubling(in ControllerSignals s, int l, int limit)
    {
        if (_phase != Phase.ProbeUp || !InSlowStart || !Fast)
        {
            return null;
        }
        _measurement.Add(s.BytesDelivered, s.TickDuration, s.Reads.Span, s.ReadsInFlightTime, issuedFrom: _phaseStart, tickEnd: s.Now, settled: false);
        if (!_measurement.FromReads)
        {
            _measurement.Reset();
            return null;
        }
        var gain = Gain(_measurement.BytesPerSecond, _baseThroughput);
        var error = CombinedError();
        var margin = gain - SlowStartGain(l);
        // On skewed sizes the first tick errs low instead: only reads shorter than a tick complete
        // in it, and those pay the per-request cost on fewer bytes (docs/decisions/0001-slow-start-from-l2.md). After a doubling that scaled almost
        // linearly, one that falls short of slow start's share by less than half its error and
        // by less than FirstTickShortfall goes on too.
        var withinError = _lastDoublingShare >= ClearDoublingShare && double.IsFinite(error)
            && margin >= -error / 2 && gain >= (SlowStartEfficiency - FirstTickShortfall) * ProportionalGain(l);
        if (margin >= error || withinError)
        {
            _record.Record(l, _measurement.BytesPerSecond, s.Now);
            return AfterSlowStartStep(s.Now, _measurement.BytesPerSecond, l, limit, paid: true);
        }
        _measurement.Reset();
        return null;
    }

    /// <summary>Two standard errors of a gain between the measurement and the base.</summary>
    private double CombinedError() =>
        2 * Math.Sqrt((_measurement.RelativeError * _measurement.RelativeError) + (_baseRelativeError * _baseRelativeError));

    /// <summary>
    /// Whether the measurement may decide (if clear; see <see cref="Decisive"/>): the ticks an error
    /// estimate needs (with long ticks fewer have an infinite error), then <see cref="ControllerOptions.MeasureTime"/>.
    /// When the reads themselves give the rate (Little's law) in slow start, or while <see cref="Fast"/>
    /// outside a probe down (after a step down the higher L's reads drain), three ticks or a tick or
    /// two with <see cref="MinReadsForEarlyCall"/> reads (any number in slow start while Fast) are
    /// enough, as Decisive still waits for a clear call. Bytes per tick over so short a window are
    /// not: reads issued before it that complete inside it inflate it. Nothing delivered yet is no
    /// measurement to compare with.
    /// </summary>
    private bool MeasuredEnough(TimeSpan tick)
    {
        var quick = _measurement.FromReads && (InSlowStart || (Fast && _phase != Phase.ProbeDown));
        var ticks = _measurement.TickCount >= ThroughputMeasurement.MinTicksForError
            || (quick && (_measurement.ReadCount >= MinReadsForEarlyCall || (InSlowStart && Fast)));
        var time = quick || Reached(_measurement.Time, _options.MeasureTime, tick);
        var delivered = _measurement.BytesPerSecond > 0 || Reached(_measurement.Time, _options.MaxMeasureTime, tick);
        return ticks && time && delivered;
    }

    /// <summary>The measurement a call that stops growth needs: the ticks an error estimate needs, over <see cref="ControllerOptions.MeasureTime"/>.</summary>
    private bool FullyMeasured(TimeSpan tick) =>
        _measurement.TickCount >= ThroughputMeasurement.MinTicksForError && Reached(_measurement.Time, _options.MeasureTime, tick);

    /// <summary>
    /// Where the queueing rule's cut from <paramref name="l"/> to <paramref name="to"/> (where the
    /// reads would not queue) goes, or null for none: the record decides (<see cref="ThroughputRecord.CutTo"/>).
    /// What L delivers is <paramref name="recent"/>, over the same second as the latencies judged,
    /// when known: a measurement since a plateau began mixes a device before and after it changed.
    /// With a record but nothing yet for this L, the cut waits for the measurement, but no longer
    /// than one takes after L changed (<paramref name="changedAt"/>): every hold restarts measuring,
    /// so under holds it never comes. A probe down to a knee (<see cref="KneeOvershoot"/>) is itself
    /// the cut: the reads it sees queue were mostly issued by the L above it.
    /// </summary>
    public (int L, string Note)? QueueingCutTo(int l, int to, TimeSpan now, TimeSpan changedAt, double? recent = null)
    {
        if (l <= 1 || (_phase == Phase.ProbeDown && _knee is not null))
        {
            return null;
        }
        var waitedEnough = now - changedAt >= _options.SettleTime + _options.MaxMeasureTime;
        return _record.CutTo(l, Math.Clamp(to, 1, l - 1), now, recent ?? CurrentThroughput(l, now), waitedEnough, _options.GrowthMinGain);
    }

    /// <summary>Measurements and settling are counted in whole ticks, so a target is met within half a tick.</summary>
    private static bool Reached(TimeSpan elapsed, TimeSpan target, TimeSpan tick) => elapsed + (tick / 2) >= target;

    private static double Gain(double throughput, double baseline) =>
        baseline > 0 ? (throughput / baseline) - 1 : (throughput > 0 ? 1 : 0);

    private static ControllerStep Stay(int l, string reason, DecisionCause cause) => new(l, Hold, reason, cause);

    /// <summary>The gain that decides the probe in progress.</summary>
    private double MinGain => _phase == Phase.ProbeDown && _knee is not null ? KneeProbeMinGain : _options.GrowthMinGain;

    private static int FineStepUp(int l, int limit) => Math.Min(limit, Math.Max(l + 1, (int)Math.Round(l * FineStepFactor, MidpointRounding.AwayFromZero)));

    private static int FineStepDown(int l) => Math.Clamp((int)Math.Round(l / FineStepFactor, MidpointRounding.AwayFromZero), 1, l - 1);

    /// <summary>
    /// Whether the step's gain (for a downward probe: the gain going back up would bring) is clear
    /// of the minimum gain by two standard errors of the two measurements combined. In slow start
    /// a doubling that falls short of <see cref="SlowStartEfficiency"/> must fall clearly short
    /// too, for up to <see cref="ControllerOptions.MeasureTime"/>: stopping at a knee that noise
    /// made up (one lumpy second of giants) costs fine steps, while doubling once too often costs
    /// one probe; longer, waiting costs more.
    /// </summary>
    private bool Decisive(double throughput, int l)
    {
        var gain = _phase == Phase.ProbeDown ? Gain(_baseThroughput, throughput) : Gain(throughput, _baseThroughput);
        var error = CombinedError();
        if (Math.Abs(gain - MinGain) < error)
        {
            return false;
        }
        return !(_phase == Phase.ProbeUp && InSlowStart) || gain >= SlowStartGain(l) || SlowStartGain(l) - gain >= error
            || _measurement.Time >= _options.MeasureTime;
    }

    /// <summary>
    /// Whether a probe up to <paramref name="l"/> that gained <paramref name="gain"/>, taken as final,
    /// stops growth: a step back to the base, or a probe down to a sharp knee far below. A doubling
    /// that pays slow start's share does not (L doubles again, or holds a plateau at the limit), nor
    /// one that pays less but more than the minimum and is not far past its knee: L stays and fine
    /// steps go on up at once (at the limit: a plateau there), and if the call was low, the first of
    /// them pays in proportion and slow start resumes: waiting for a full measurement there held a
    /// short read at a low L for a large share of it (docs/decisions/0001-slow-start-from-l2.md). The same verdicts as
    /// <see cref="AfterProbeUp"/>, which <see cref="KneeToLookDownTo"/> keeps in step.
    /// </summary>
    private bool StopsGrowth(double gain, int l, int limit) =>
        !(InSlowStart && gain >= SlowStartGain(l))
        && (gain < _options.GrowthMinGain || KneeToLookDownTo(gain, l, limit) is not null);

    /// <summary>The gain a step from the base to <paramref name="l"/> must show to keep slow start going.</summary>
    private double SlowStartGain(int l) => SlowStartEfficiency * ProportionalGain(l);

    /// <summary>The gain a step from the base to <paramref name="l"/> would show if throughput scaled linearly.</summary>
    private double ProportionalGain(int l) => ((double)l / _baseConcurrency) - 1;

    private double? CurrentThroughput(int l, TimeSpan now) =>
        _measurement.TimeWithUnsettled > TimeSpan.Zero ? _measurement.BytesPerSecond : _record.Fresh(l, now);

    private string PhaseNote() => _phase switch
    {
        Phase.ProbeUp => $" (probe up from {_baseConcurrency})",
        Phase.ProbeDown => $" (probe down from {_baseConcurrency})",
        _ => "",
    };

    private void SetBase(int concurrency, double throughput)
    {
        _unjudgedFrom = null;
        _baseConcurrency = concurrency;
        _baseThroughput = throughput;
        _baseRelativeError = _measurement.RelativeError;
    }

    /// <summary>Holds at <paramref name="l"/> for a plateau, then probes up or down.</summary>
    private ControllerStep HoldOnPlateau(TimeSpan now, bool probeUpNext, int l, string reason)
    {
        _probeUpNext = probeUpNext;
        BeginMeasuring(Phase.Baseline, now, _options.PlateauTime);
        return new ControllerStep(l, Hold, reason, DecisionCause.Plateau);
    }

    private TimeSpan RemainingPlateau(TimeSpan now) => _plateauUntil > now ? _plateauUntil - now : TimeSpan.Zero;

    /// <summary>Growth is in fine steps from here, and a proportional fine step does not restart slow start.</summary>
    private void LeaveSlowStart()
    {
        InSlowStart = false;
        _uncutSinceSlowStart = false;
    }

    private void BeginMeasuring(Phase phase, TimeSpan now, TimeSpan plateau, bool grew = false)
    {
        // After a step up the reads in flight carry on and the new readers start at once: what
        // needs to pass before measuring is their first reads (twice a task's I/O time), not
        // the whole settle time that reads issued under a higher L need to drain after a cut.
        _settle = grew ? TimeSpan.FromTicks(Math.Min(_options.SettleTime.Ticks, 2 * _options.TargetTaskDuration.Ticks)) : _options.SettleTime;
        _phase = phase;
        _phaseStart = now;
        _plateauUntil = now + plateau;
        _measurement.Reset();
    }
}
