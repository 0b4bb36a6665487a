using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher;

// What a finished measurement decides: the first probe from a measured L, and the verdict on a probe.
internal sealed partial class HillClimber
{
    /// <summary>
    /// Where a downward probe from the base goes: one fine step, or, when reads queue, to L / inflation,
    /// where they would not (on a noisy device one step at a time takes a minute). Not when a fresh
    /// measurement already showed an L in between delivering less: then the latency rose for reads
    /// that pay (more streams), not for a queue.
    /// </summary>
    private (int L, string Note) ProbeDownTo(int l, TimeSpan now, QueueingEvidence? queueing)
    {
        if (queueing is not { } q || q.Inflation < QueuedInflation || !(q.MajorityClassInflation >= QueuedInflation))
        {
            return (FineStepDown(l), "");
        }
        var down = Math.Clamp((int)Math.Ceiling(l / q.Inflation), 1, l - 1);
        for (var between = down; between < l; between++)
        {
            if (_record.Fresh(between, now) is { } measured && measured * (1 + _options.GrowthMinGain) <= _baseThroughput)
            {
                return (FineStepDown(l), "");
            }
        }
        return (down, ControlText.Invariant($"; reads take {q.Inflation:0.0}x their un-queued time"));
    }

    private ControllerStep StartProbe(TimeSpan now, double throughput, int l, int limit, QueueingEvidence? queueing, int factor = 2)
    {
        SetBase(l, throughput);
        var delivers = $"L={l} delivers {ControlText.Rate(throughput)}";
        if (l < limit && (_probeUpNext || l == 1))
        {
            var next = InSlowStart ? Math.Min(limit, factor * l) : FineStepUp(l, limit);
            BeginMeasuring(Phase.ProbeUp, now, plateau: TimeSpan.Zero, grew: true);
            return new ControllerStep(next, Grow, $"grow: {(InSlowStart ? "slow start, " : "")}probing L={next} ({delivers})", DecisionCause.Probe);
        }
        if (l > 1)
        {
            // Looking down means L is at a knee (or a limit held it there): no more doubling.
            var paidIntoLimit = InSlowStart && _slowStartPaid && l >= limit;
            LeaveSlowStart();
            if (paidIntoLimit)
            {
                // Slow start ran into the limit (a size ceiling, a live limit) with its steps still
                // paying: nothing says the device bends below, so L holds a plateau first, as when a
                // doubling lands on the limit. Probing down at once cost rare giants on the network
                // disk a second at L=19 of a 3 s read whose best fixed L is past the limit of 25.
                return HoldOnPlateau(now, probeUpNext: false, l, $"hold: L={l} at limit {limit}, slow start still paying ({delivers})");
            }
            var (down, note) = ProbeDownTo(l, now, queueing);
            if (_knee < down)
            {
                (down, note) = (_knee.Value, "; a sharp knee would be there");
            }
            BeginMeasuring(Phase.ProbeDown, now, plateau: TimeSpan.Zero);
            return new ControllerStep(down, Cut, $"cut: probing L={down} ({delivers}{note})", DecisionCause.Probe);
        }
        return HoldOnPlateau(now, probeUpNext: true, l, $"hold: L=1 at limit 1 ({delivers})");
    }

    private ControllerStep AfterProbeUp(TimeSpan now, double throughput, int l, int limit)
    {
        if (InSlowStart)
        {
            return AfterSlowStartStep(now, throughput, l, limit);
        }
        var from = _baseConcurrency;
        var gain = Gain(throughput, _baseThroughput);
        if (gain < _options.GrowthMinGain)
        {
            _payingSteps = 0;
            return HoldOnPlateau(now, probeUpNext: false, from,
                $"hold: L={l} gained {ControlText.Change(gain)} < {ControlText.Percent(_options.GrowthMinGain)}, back to {from}");
        }
        // A fine step that pays in proportion, as a doubling must to go on, is no nearer the knee.
        var proportional = _uncutSinceSlowStart && gain >= SlowStartGain(l);
        SetBase(l, throughput);
        _payingSteps++;
        var gained = $"{ControlText.Change(gain)} MB/s at L={l}";
        if (l >= limit)
        {
            return HoldOnPlateau(now, probeUpNext: false, l, $"hold: {gained}, at limit {limit}");
        }
        BeginMeasuring(Phase.ProbeUp, now, plateau: TimeSpan.Zero, grew: true);
        if (_payingSteps >= PayingStepsForSlowStart || proportional)
        {
            InSlowStart = true;
            _slowStartPaid = true;
            _lastDoublingShare = 0;
            var next = Math.Min(limit, 2 * l);
            var why = proportional ? $"at least {ControlText.Percent(SlowStartEfficiency)} of the proportional gain" : $"{_payingSteps} steps paid";
            return new ControllerStep(next, Grow, $"grow: {gained} over {from}, {why}: slow start, probing {next}", DecisionCause.Probe);
        }
        var up = FineStepUp(l, limit);
        return new ControllerStep(up, Grow, $"grow: {gained} over {from}, probing {up}", DecisionCause.Probe);
    }

    private ControllerStep AfterSlowStartStep(TimeSpan now, double throughput, int l, int limit, bool paid = false)
    {
        var from = _baseConcurrency;
        var gain = Gain(throughput, _baseThroughput);
        var gained = $"{ControlText.Change(gain)} MB/s at L={l} over {from}";
        var shortOfShare = gain < SlowStartGain(l);
        if (paid || !shortOfShare)
        {
            _lastDoublingShare = gain / ProportionalGain(l);
            SetBase(l, throughput);
            _slowStartPaid = true;
            if (l >= limit)
            {
                // The plateau is the hold at the limit: after it L looks down, not for a second plateau.
                LeaveSlowStart();
                return HoldOnPlateau(now, probeUpNext: false, l, $"hold: {gained}, at limit {limit}");
            }
            var next = Math.Min(limit, 2 * l);
            BeginMeasuring(Phase.ProbeUp, now, plateau: TimeSpan.Zero, grew: true);
            var early = shortOfShare ? $" (on its first tick, within its error of {ControlText.Percent(SlowStartEfficiency)} of the proportional gain)" : "";
            return new ControllerStep(next, Grow, $"grow: {gained}{early}, slow start: probing {next}", DecisionCause.Probe);
        }

        // Before the paying steps are reset: they tell whether slow start saw the device bend gradually.
        var knee = KneeToLookDownTo(gain, l, limit);
        InSlowStart = false;
        _uncutSinceSlowStart = true;
        _payingSteps = 0;
        if (gain < _options.GrowthMinGain)
        {
            return HoldOnPlateau(now, probeUpNext: false, from,
                $"hold: L={l} gained {ControlText.Change(gain)} < {ControlText.Percent(_options.GrowthMinGain)} over {from}, back to {from}");
        }
        // The step paid, though short of slow start's share: it stays, and the climb goes on at once
        // instead of after a plateau, which kept a device that bends gradually at the step's L.
        SetBase(l, throughput);
        var share = $"{gained}, short of {ControlText.Percent(SlowStartEfficiency)} of the proportional gain";
        if (l >= limit)
        {
            return HoldOnPlateau(now, probeUpNext: false, l, $"hold: {share}: L={l} stays, at limit {limit}");
        }
        if (knee is not null)
        {
            // Far past where a sharp knee would be (200 MB/s shared by all streams: 2 -> 8 gains +91%,
            // the knee is 4): look below first. L is measured again before, as in the first second
            // after a step up Little's law errs high, and a knee delivering as much would look worse.
            _probeUpNext = false;
            _knee = knee;
            BeginMeasuring(Phase.Baseline, now, plateau: TimeSpan.Zero, grew: true);
            return Stay(l, $"hold: {share}, far past a sharp knee's {knee}: measuring L={l} again, then probing down", DecisionCause.Plateau);
        }
        _probeUpNext = true;
        var probe = StartProbe(now, throughput, l, limit, queueing: null);
        return probe with { Reason = $"grow: {share}: L={l} stays, probing {probe.Concurrency}" };
    }

    /// <summary>
    /// The knee a slow-start step from the base to <paramref name="l"/> that gained <paramref name="gain"/>
    /// points to (where linear scaling would have delivered as much), when the step ends slow start
    /// keeping L (it paid the minimum, short of slow start's share, below the limit) and L is more
    /// than <see cref="KneeOvershoot"/> times that knee; null otherwise, and when slow start was
    /// restarted by <see cref="PayingStepsForSlowStart"/> paying fine steps in a row, which have seen
    /// the device bend gradually below (one fine step that paid in proportion has not).
    /// </summary>
    private int? KneeToLookDownTo(double gain, int l, int limit)
    {
        if (!InSlowStart || gain >= SlowStartGain(l) || gain < _options.GrowthMinGain || l >= limit
            || _payingSteps >= PayingStepsForSlowStart)
        {
            return null;
        }
        var knee = (int)Math.Ceiling(_baseConcurrency * (1 + gain));
        return l > KneeOvershoot * knee ? knee : null;
    }

    private ControllerStep AfterProbeDown(TimeSpan now, double throughput, int l, int limit, QueueingEvidence? queueing)
    {
        var from = _baseConcurrency;
        var change = $"{ControlText.Change(Gain(throughput, _baseThroughput))} vs L={from}";
        var minGain = MinGain;
        var knee = _knee;
        _knee = null;
        _payingSteps = 0;
        // The same test as growing, seen from below: if going back up would not gain the minimum,
        // the smaller L is as good and is kept (fewer reads queued, less foreground impact).
        if (throughput * (1 + minGain) <= _baseThroughput)
        {
            if (knee is not null && from <= limit)
            {
                // The knee that slow start's last step pointed to is not there: more readers may still pay.
                _probeUpNext = true;
                var up = StartProbe(now, _baseThroughput, from, limit, queueing: null);
                return up.Kind == Grow ? up with { Reason = $"grow: L={l} delivered {change}, {up.Reason["grow: ".Length..]}" } : up;
            }
            // The limit may have fallen to this L while it was measured: then the step back is not ours to take.
            return from > limit
                ? HoldOnPlateau(now, probeUpNext: true, l, $"hold: L={l} delivered {change}, stays at limit {limit}")
                : HoldOnPlateau(now, probeUpNext: true, from, $"hold: L={l} delivered {change}, back to {from}");
        }
        SetBase(l, throughput);
        if (l == 1)
        {
            return HoldOnPlateau(now, probeUpNext: true, l, $"hold: L=1 delivers {change}");
        }
        var (down, note) = ProbeDownTo(l, now, queueing);
        BeginMeasuring(Phase.ProbeDown, now, plateau: TimeSpan.Zero);
        return new ControllerStep(down, Cut,
            $"cut: L={l} delivers {change}, {from - l} more {(from - l == 1 ? "is" : "are")} not worth {ControlText.Percent(minGain)}, probing {down}{note}",
            DecisionCause.Probe);
    }
}
