using System.Diagnostics;

namespace Indexing.Prefetcher;

/// <summary>
/// Counts what one run did, for the controller (per-tick deltas) and the pressure view (Publish),
/// whatever the strategy. Threading: counters from any thread; <see cref="Tick"/> from the tick loop.
/// </summary>
internal sealed partial class PrefetchMeter
{
    private const double BytesPerMiB = 1024 * 1024;
    private const int RecentLatencyCount = 512;

    private readonly Stopwatch _clock = Stopwatch.StartNew();
    private readonly Lock _latencyLock = new();
    private readonly List<ReadSample> _tickReads = [];
    private readonly double[] _recentLatenciesPerMiB = new double[RecentLatencyCount];
    private int _recentLatencyCount;
    private int _recentLatencyNext;

    // Reads inside the source now, and the integral of that count over time since the last tick
    // (under _latencyLock): Little's law turns it and the completed reads' rate into throughput.
    private int _readsInFlight;
    private TimeSpan _inFlightSince;
    private TimeSpan _readsInFlightTime;

    private long _documentsPlanned;
    private long _bytesPlanned;
    private int _planComplete;
    private (long Documents, long Bytes)? _counted;
    private long _documentsRead;
    private long _bytesRead;
    private long _documentsTaken;
    private long _bytesTaken;
    private long _stalls;

    // Written by the tick loop only; _lastTickAt and _limitTicks change under _publishLock.
    private TimeSpan _lastTickAt;
    private long _lastTickBytes;
    private TimeSpan _lastConsumerWait;
    private TimeSpan _lastRateLimitWait;
    private long _limitTicks;

    public PrefetchMeter(string strategy, ReadAdmission admission, TimeSpan historyLength)
    {
        Strategy = strategy;
        Admission = admission;
        _historyCapacity = Math.Max(1, (int)historyLength.TotalSeconds);
        _latest = new PrefetchPressure { Strategy = strategy, BudgetBytes = admission.Limits.BudgetBytes };
    }

    public string Strategy { get; }

    public ReadAdmission Admission { get; }

    public DocumentSizeHistogram Sizes { get; } = new();

    public WaitTimer ConsumerWait { get; } = new();

    /// <summary>Time since the run started.</summary>
    public TimeSpan Now => _clock.Elapsed;

    public void Planned(ReadTask task)
    {
        Interlocked.Add(ref _documentsPlanned, task.DocumentCount);
        Interlocked.Add(ref _bytesPlanned, task.Bytes);
    }

    public void PlanCompleted() => Volatile.Write(ref _planComplete, 1);

    /// <summary>The census counted the run's documents and bytes.</summary>
    public void Counted(long documents, long bytes)
    {
        lock (_publishLock)
        {
            _counted = (documents, bytes);
        }
    }

    /// <summary>A read entered (+1) or left (-1, completed or failed) the source.</summary>
    public void ReadsInSource(int change)
    {
        lock (_latencyLock)
        {
            AccumulateInFlight();
            _readsInFlight += change;
        }
    }

    /// <param name="ramp">The read was one of the run's first tasks, cut below the target (<see cref="ReadTask.Ramp"/>).</param>
    public void ReadCompleted(long bytes, int documents, TimeSpan latency, bool ramp = false)
    {
        Interlocked.Add(ref _bytesRead, bytes);
        Interlocked.Add(ref _documentsRead, documents);
        if (bytes <= 0)
        {
            return;
        }

        var perMiB = latency.Ticks * BytesPerMiB / bytes;
        lock (_latencyLock)
        {
            _tickReads.Add(new ReadSample(bytes, documents, latency, ramp));
            _recentLatenciesPerMiB[_recentLatencyNext] = perMiB;
            _recentLatencyNext = (_recentLatencyNext + 1) % RecentLatencyCount;
            _recentLatencyCount = Math.Min(_recentLatencyCount + 1, RecentLatencyCount);
        }
    }

    public void Taken(int documents, long bytes, bool stalled)
    {
        Interlocked.Add(ref _documentsTaken, documents);
        Interlocked.Add(ref _bytesTaken, bytes);
        if (stalled)
        {
            Interlocked.Increment(ref _stalls);
        }
    }

    /// <summary>Closes one tick: what happened since the previous one, as the controller's signals (but foreground and memory).</summary>
    public ControllerSignals Tick()
    {
        var now = Now;
        var duration = now - _lastTickAt;
        var admission = Admission.Snapshot();
        var bytes = Interlocked.Read(ref _bytesRead);
        var consumerWait = ConsumerWait.Total;
        var rateLimitWait = Admission.RateWait.Total;
        ReadSample[] reads;
        TimeSpan inFlightTime;
        lock (_latencyLock)
        {
            reads = _tickReads.Count == 0 ? [] : [.. _tickReads];
            _tickReads.Clear();
            AccumulateInFlight();
            inFlightTime = _readsInFlightTime;
            _readsInFlightTime = TimeSpan.Zero;
        }

        var signals = new ControllerSignals
        {
            Now = now,
            TickDuration = duration,
            BytesDelivered = bytes - _lastTickBytes,
            Reads = reads,
            ReadsInFlightTime = inFlightTime,
            ConsumerWaitFraction = duration > TimeSpan.Zero ? Math.Clamp((consumerWait - _lastConsumerWait) / duration, 0, 1) : 0,
            BufferedBytes = admission.BufferedBytes,
            InFlightBytes = admission.InFlightBytes,
            BudgetBytes = admission.BudgetBytes,
            LargestRecentDocumentBytes = Sizes.Snapshot().Max,
            RateLimited = rateLimitWait > _lastRateLimitWait,
            MaxConcurrency = admission.Limits.MaxConcurrency,
        };
        lock (_publishLock)
        {
            // Read together by Publish, for the mean L.
            _limitTicks += admission.ConcurrencyLimit * duration.Ticks;
            _lastTickAt = now;
        }

        _lastTickBytes = bytes;
        _lastConsumerWait = consumerWait;
        _lastRateLimitWait = rateLimitWait;
        return signals;
    }

    // Under _latencyLock.
    private void AccumulateInFlight()
    {
        var now = Now;
        _readsInFlightTime += (now - _inFlightSince) * _readsInFlight;
        _inFlightSince = now;
    }

    private (TimeSpan? P50, TimeSpan? P99) RecentLatencyPercentiles()
    {
        double[] copy;
        lock (_latencyLock)
        {
            if (_recentLatencyCount == 0)
            {
                return (null, null);
            }

            copy = _recentLatenciesPerMiB[.._recentLatencyCount];
        }

        Array.Sort(copy);
        return (TimeSpan.FromTicks((long)copy[copy.Length / 2]), TimeSpan.FromTicks((long)copy[(int)Math.Ceiling(copy.Length * 0.99) - 1]));
    }
}
