using System.Collections.Immutable;

namespace Indexing.Prefetcher;

// Builds PrefetchPressure snapshots: windowed rates from cumulative samples, the per-second
// history, and the latest snapshot that readers get with one field read.
internal sealed partial class PrefetchMeter
{
    private static readonly TimeSpan _shortWindow = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan _longWindow = TimeSpan.FromSeconds(10);

    private readonly Lock _publishLock = new();

    // Cumulative counters at each publish, oldest first; the first is always at or before now - 10 s
    // (or the start), so both windows find their base.
    private readonly List<Sample> _samples = [default];
    private readonly int _historyCapacity;
    private long _lastPointSecond = -1;
    private ImmutableArray<PrefetchPressurePoint> _history = [];
    private PrefetchPressure _latest;

    /// <summary>The most recently published snapshot.</summary>
    public PrefetchPressure Latest => Volatile.Read(ref _latest);

    public void Publish(in PressureView view)
    {
        var admission = Admission.Snapshot();
        var sizes = Sizes.Snapshot();
        var (latencyP50, latencyP99) = RecentLatencyPercentiles();
        lock (_publishLock)
        {
            var now = Now;
            var current = new Sample(
                now,
                Interlocked.Read(ref _bytesRead),
                Interlocked.Read(ref _documentsRead),
                Interlocked.Read(ref _bytesTaken),
                ConsumerWait.Total,
                Admission.BudgetWait.Total);
            // Samples before the long window's base are never needed again: it becomes the first.
            _samples.RemoveRange(0, Math.Max(0, _samples.FindLastIndex(s => s.At <= now - _longWindow)));
            var recent = BaseFor(now - _shortWindow);
            var longer = _samples[0];
            _samples.Add(current);

            var megabytesPerSecond = Rate(recent, current, s => s.BytesRead) / 1e6;
            var waitPercent = Share(longer, current, s => s.ConsumerWait);
            AppendPoint(now, new PrefetchPressurePoint(
                now,
                admission.Running,
                admission.ConcurrencyLimit,
                megabytesPerSecond,
                admission.InFlightBytes,
                admission.BufferedBytes,
                waitPercent,
                view.ForegroundP99,
                sizes.P50,
                sizes.P99,
                sizes.Max));

            var planComplete = Volatile.Read(ref _planComplete) != 0;
            var bytesPlanned = Interlocked.Read(ref _bytesPlanned);
            var documentsPlanned = Interlocked.Read(ref _documentsPlanned);
            var total = _counted ?? (planComplete ? (documentsPlanned, bytesPlanned) : null);
            var takenPerSecond = Rate(longer, current, s => s.BytesTaken);
            var pressure = new PrefetchPressure
            {
                Timestamp = DateTimeOffset.UtcNow,
                Elapsed = now,
                State = view.State,
                Strategy = Strategy,
                Concurrency = admission.Running,
                ConcurrencyLimit = admission.ConcurrencyLimit,
                MeanConcurrencyLimit = MeanConcurrencyLimit(now, admission.ConcurrencyLimit),
                InFlightBytes = admission.InFlightBytes,
                BufferedBytes = admission.BufferedBytes,
                BudgetBytes = admission.BudgetBytes,
                HighWaterMarkBytes = admission.HighWaterMarkBytes,
                LargestOversizedAdmissionBytes = admission.LargestOversizedAdmission,
                QueuedBatches = view.QueuedBatches,
                MegabytesPerSecondLastSecond = megabytesPerSecond,
                MegabytesPerSecondLast10Seconds = Rate(longer, current, s => s.BytesRead) / 1e6,
                DocumentsPerSecondLastSecond = Rate(recent, current, s => s.DocumentsRead),
                DocumentsPerSecondLast10Seconds = Rate(longer, current, s => s.DocumentsRead),
                ReadLatencyPerMiBP50 = latencyP50,
                ReadLatencyPerMiBP99 = latencyP99,
                DocumentSizeP50Bytes = sizes.P50,
                DocumentSizeP99Bytes = sizes.P99,
                DocumentSizeMaxBytes = sizes.Max,
                LargestRecentDocumentId = sizes.LargestRecentId,
                ConsumerWaitPercent = waitPercent,
                ProducerBlockedPercent = Share(longer, current, s => s.ProducerBlocked),
                ConsumerWaitTime = current.ConsumerWait,
                StallCount = Interlocked.Read(ref _stalls),
                LastDecision = view.Decision?.Kind.Name(),
                LastDecisionReason = view.Decision?.Reason,
                ThrottledByForeground = view.Decision?.ThrottledByForeground ?? false,
                ForegroundP99 = view.ForegroundP99,
                MaxBytesPerSecond = admission.Limits.MaxBytesPerSecond,
                DocumentsDone = Interlocked.Read(ref _documentsTaken),
                BytesDone = current.BytesTaken,
                DocumentsRead = current.DocumentsRead,
                BytesRead = current.BytesRead,
                DocumentsPlanned = documentsPlanned,
                BytesPlanned = bytesPlanned,
                PlanComplete = planComplete,
                DocumentsTotal = total?.Documents,
                BytesTotal = total?.Bytes,
                Eta = total is { Bytes: var totalBytes } && takenPerSecond > 0
                    ? TimeSpan.FromSeconds(Math.Max(0, totalBytes - current.BytesTaken) / takenPerSecond)
                    : null,
                Failure = view.Failure,
                History = _history,
                RecentDecisions = view.Decisions,
            };
            Volatile.Write(ref _latest, pressure);
        }
    }

    // Ticks integrate L over their durations; the time since the last tick is at the current L.
    private double MeanConcurrencyLimit(TimeSpan now, int currentLimit)
    {
        // In whole ticks, so a constant L comes out exactly as itself.
        var sinceTick = now - _lastTickAt;
        return now > TimeSpan.Zero ? (double)(_limitTicks + (currentLimit * sinceTick.Ticks)) / now.Ticks : currentLimit;
    }

    // The latest sample at or before `at` (the oldest if none is that old).
    private Sample BaseFor(TimeSpan at) => _samples[Math.Max(0, _samples.FindLastIndex(s => s.At <= at))];

    // One point per second, the oldest dropped past the history length (a copy a second: ~300 points).
    private void AppendPoint(TimeSpan now, PrefetchPressurePoint point)
    {
        var second = (long)now.TotalSeconds;
        if (second > _lastPointSecond)
        {
            _lastPointSecond = second;
            _history = (_history.Length < _historyCapacity ? _history : _history.RemoveAt(0)).Add(point);
        }
    }

    private static double Rate(in Sample from, in Sample to, Func<Sample, long> value)
    {
        var seconds = (to.At - from.At).TotalSeconds;
        return seconds > 0 ? (value(to) - value(from)) / seconds : 0;
    }

    private static double Share(in Sample from, in Sample to, Func<Sample, TimeSpan> value)
    {
        var span = to.At - from.At;
        return span > TimeSpan.Zero ? Math.Clamp((value(to) - value(from)) / span, 0, 1) * 100 : 0;
    }

    private readonly record struct Sample(
        TimeSpan At, long BytesRead, long DocumentsRead, long BytesTaken, TimeSpan ConsumerWait, TimeSpan ProducerBlocked);
}

/// <summary>What the pipeline knows for a pressure snapshot (the meter and the admission know the rest).</summary>
internal readonly record struct PressureView(
    PrefetchState State,
    int QueuedBatches,
    string? Failure,
    TimeSpan? ForegroundP99,
    ControllerDecision? Decision,
    ImmutableArray<PrefetchDecisionEntry> Decisions);
