using Indexing.Storage;
using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher;

/// <summary>
/// The rules that come before growth, in priority order:
/// <list type="number">
/// <item>A fixed L (<see cref="ControllerOptions.FixedConcurrency"/>) stays, clamped only by a live limit.</item>
/// <item>The first tick starts at the initial L. A live limit or the size ceiling below L clamps it at once.</item>
/// <item>Foreground Gets slower than their target: halve L, cool down.</item>
/// <item>Reads queueing in most size classes (<see cref="ReadLatencyBaseline"/>): cut to where they
/// would not queue, at most by the queueing factor and at least to half, unless that loses
/// throughput on record (<see cref="HillClimber.QueueingCutTo"/>), and cool down.</item>
/// <item>Hold while the indexer is the bottleneck, memory is high, a rate limit binds, or cooling down.</item>
/// </list>
/// Each returns the step and what it means for the climb; null lets the <see cref="HillClimber"/>
/// decide. Owns the cooldown. Not thread-safe: owned by the controller's tick loop.
/// </summary>
internal sealed class ControllerRules(
    ControllerOptions options,
    ForegroundBaseline foreground,
    ConsumerWaitWindow consumerWaits,
    HillClimber climber,
    RememberedConcurrency? remembered = null)
{
    /// <summary>A queueing cut never goes below this share of L in one step, however inflated the reads.</summary>
    public const double DeepestQueueingCut = 0.5;

    private bool _started;
    private int _lastLimit = options.MaxConcurrency;
    private TimeSpan _cooldownUntil;
    private bool _cooldownIsForeground;

    /// <summary>Whether a foreground cut's cooldown is running at <paramref name="now"/>.</summary>
    public bool CoolingDownForForeground(TimeSpan now) => _cooldownIsForeground && now < _cooldownUntil;

    /// <param name="s">This tick's signals (already observed by the baselines).</param>
    /// <param name="l">L in force.</param>
    /// <param name="limit">The lowest of the configured, live and size limits.</param>
    /// <param name="sizeLimited">The limit is the size ceiling (recent large documents), not the configured or live limit.</param>
    /// <param name="changedAt">When L last changed.</param>
    /// <param name="queueing">What the reads of the last second say about queueing; null with too few.</param>
    public (ControllerStep Step, ClimbEffect Effect)? Apply(in ControllerSignals s, int l, int limit, bool sizeLimited, TimeSpan changedAt, QueueingEvidence? queueing)
    {
        var now = s.Now;
        var lastLimit = _lastLimit;
        _lastLimit = limit;
        if (options.FixedConcurrency is { } fixedL)
        {
            var fixedStep = Math.Min(fixedL, limit);
            var kind = !_started ? Start : fixedStep < l ? Cut : fixedStep > l ? Grow : Hold;
            _started = true;
            return (new ControllerStep(fixedStep, kind, $"{kind.Name()}: L fixed at {fixedL}{(fixedStep < fixedL ? $" (limit {fixedStep})" : "")}", DecisionCause.Limit), ClimbEffect.None);
        }
        if (!_started)
        {
            _started = true;
            // A remembered L was reached on this device before: measured there and probed by fine
            // steps, not doubled from (docs/decisions/0015).
            var from = remembered is null ? "" : $", where the last prefetch reading this device alone settled ({remembered})";
            var effect = remembered is null ? ClimbEffect.RestartInSlowStart : ClimbEffect.StartRemembered;
            return (l > limit
                ? new ControllerStep(limit, Start, $"start: L={limit} (limit {limit}{SharedNote(s)}){from}", DecisionCause.Start)
                : new ControllerStep(l, Start, $"start: L={l}{from}", DecisionCause.Start), effect);
        }
        if (l > limit)
        {
            return (sizeLimited
                ? new ControllerStep(limit, Cut, $"cut: {SizeCeilingText(s, limit)}", DecisionCause.Sizes)
                : new ControllerStep(limit, Cut, $"cut: limit {limit}{SharedNote(s)}", DecisionCause.Limit), ClimbEffect.Restart);
        }
        // L was pinned by the old limit: the device was never measured above it, so measure afresh
        // and grow as from the start, not after a plateau, even when a hold decides this tick.
        var raised = limit > lastLimit && l == lastLimit;
        var pause = raised ? ClimbEffect.RestartInSlowStart : ClimbEffect.Pause;

        var inCooldown = now < _cooldownUntil;
        if (foreground.IsOver(now, s.ForegroundP99, out var p99, out var target))
        {
            var text = $"foreground p99 {ControlText.Duration(p99)} > {ControlText.Duration(target)}";
            if (l == 1)
            {
                return (Stay(l, $"hold: {text} at L=1", DecisionCause.Foreground), raised ? ClimbEffect.RestartInSlowStart : ClimbEffect.None);
            }
            if (!inCooldown)
            {
                StartCooldown(now, foreground: true);
                return (new ControllerStep(CutTo(l, options.ForegroundCutFactor), Cut, $"cut: {text}", DecisionCause.Foreground), ClimbEffect.RestartAfterCut);
            }
        }
        if (!inCooldown && QueueingCut(now, l, changedAt, queueing) is { } cut)
        {
            return (cut, ClimbEffect.RestartProbingDown);
        }
        if (IndexerBottleneck(s) is { } indexer)
        {
            return (Stay(l, indexer, DecisionCause.Indexer), pause);
        }
        if (s.MemoryHigh)
        {
            return (Stay(l, "hold: memory high", DecisionCause.Memory), pause);
        }
        if (s.RateLimited)
        {
            return (Stay(l, "hold: rate-limited by the max MB/s setting", DecisionCause.RateLimit), pause);
        }
        if (inCooldown)
        {
            return (Stay(l, $"hold: cooldown {ControlText.Duration(_cooldownUntil - now)} after cut", DecisionCause.Cooldown), pause);
        }
        if (raised)
        {
            climber.Apply(ClimbEffect.RestartInSlowStart, now);
        }
        return null;
    }

    /// <summary>How recent document sizes bound L (see <see cref="ControllerOptions.LargeDocumentBudgetFraction"/>); int.MaxValue when they do not.</summary>
    public int SizeCeiling(in ControllerSignals s)
    {
        if (s.LargestRecentDocumentBytes <= 0 || s.BudgetBytes <= 0)
        {
            return int.MaxValue;
        }
        var share = s.BudgetBytes * options.LargeDocumentBudgetFraction;
        return (int)Math.Clamp(Math.Floor(share / s.LargestRecentDocumentBytes), 1, int.MaxValue);
    }

    private static string SharedNote(in ControllerSignals s) =>
        s.DeviceReaders > 1 ? $": this prefetch's share of the device, read by {s.DeviceReaders}" : "";

    /// <summary>Multiplicative cut, but always at least one step and never below one reader.</summary>
    private static int CutTo(int l, double factor) => Math.Max(1, Math.Min(l - 1, (int)(l * factor)));

    private static ControllerStep Stay(int l, string reason, DecisionCause cause) => new(l, Hold, reason, cause);

    private string SizeCeilingText(in ControllerSignals s, int ceiling) =>
        $"recent documents up to {ByteSize.Format(s.LargestRecentDocumentBytes)}: L={ceiling} of them fill " +
        $"{ControlText.Percent(options.LargeDocumentBudgetFraction)} of the {ByteSize.Format(s.BudgetBytes)} budget";

    private ControllerStep? QueueingCut(TimeSpan now, int l, TimeSpan changedAt, QueueingEvidence? queueing)
    {
        if (l <= 1 || queueing is not { } evidence || !evidence.ShowsQueueing(options.LatencyInflationLimit))
        {
            return null;
        }
        // A device with `depth` slots and L readers makes reads take L / depth times their
        // un-queued time, so L / inflation is where they would stop queueing; a single reading
        // is trusted at most down to half. The climber's record may keep it higher.
        var factor = Math.Min(options.QueueingCutFactor, Math.Max(DeepestQueueingCut, 1 / evidence.Inflation));
        if (climber.QueueingCutTo(l, CutTo(l, factor), now, changedAt, evidence.BytesPerSecond) is not { } cut)
        {
            return null;
        }
        StartCooldown(now, foreground: false);
        var classes = evidence.Classes == 1 ? "its one size class" : $"most of {evidence.Classes} size classes";
        return new ControllerStep(
            cut.L,
            Cut,
            ControlText.Invariant(
                $"cut: reads take {evidence.Inflation:0.0}x their un-queued time ({ControlText.Duration(evidence.MeanLatency)} vs {ControlText.Duration(evidence.MeanUnqueued)}), at least {evidence.MajorityClassInflation:0.0}x in {classes}{cut.Note}"),
            DecisionCause.Queueing);
    }

    private string? IndexerBottleneck(in ControllerSignals s)
    {
        if (s.BudgetBytes <= 0)
        {
            return null;
        }
        var buffered = (double)s.BufferedBytes / s.BudgetBytes;
        if (buffered >= options.BufferFullFraction)
        {
            return $"hold: indexer is the bottleneck (buffered {ControlText.Percent(buffered)} of budget)";
        }
        // A full buffer says so at once; a busy indexer only over the window: right after a large
        // document lands the indexer is busy for a tick or two whatever L is, and judged by that
        // tick alone every giant would hold L and restart the measurement.
        var waited = consumerWaits.WaitFraction;
        if (buffered >= options.BusyConsumerMinBufferedFraction
            && s.ConsumerWaitFraction < options.BusyConsumerMaxWaitFraction
            && waited < options.BusyConsumerMaxWaitFraction)
        {
            return $"hold: indexer is the bottleneck (it waited {ControlText.Percent(waited)} " +
                $"over {ControlText.Duration(consumerWaits.Duration)}, buffered {ControlText.Percent(buffered)} of budget)";
        }
        return null;
    }

    private void StartCooldown(TimeSpan now, bool foreground)
    {
        _cooldownUntil = now + options.CooldownAfterCut;
        _cooldownIsForeground = foreground;
    }
}
