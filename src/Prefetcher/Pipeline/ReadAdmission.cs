using System.Diagnostics;

namespace Indexing.Prefetcher;

/// <summary>
/// When the planner may issue its next read: the baselines' read-ahead credits, budget, MB/s cap
/// and concurrency behind one lock, taken in that order: budget before the cap, so that it bounds
/// what reads bring in; the slot last, so that a read waiting for tokens does not count as running.
/// A read larger than the whole budget is admitted alone when nothing else is held; the one waiter
/// admits in the planner's order, so small reads never overtake a giant waiting for budget (the
/// planner lets them pass a long read only while its lanes are full: <see cref="LongReadLanes"/>). With a
/// <see cref="SharedPrefetchBudget"/> (the engine's, one for all its prefetches) a read's bytes must fit
/// both budgets: its own first, then the shared one, where it queues behind other prefetches that
/// waited first; releasing returns bytes to both, and wakes whichever prefetch waits there. The cap is a token bucket of
/// <see cref="BurstTime"/>: a read starts once the bucket holds its bytes or is full, going into
/// debt if bigger (a 50 MB document is not blocked for ever by a 1 MB bucket). Threading: one
/// admitting thread, pulsed by every change, by its token and by other prefetches' releases (through
/// the shared budget, never under this lock); the rest, <see cref="Release"/> included, from any thread.
/// </summary>
internal sealed class ReadAdmission
{
    /// <summary>The bucket holds this much of the rate: one controller tick's worth.</summary>
    public static readonly TimeSpan BurstTime = TimeSpan.FromMilliseconds(250);

    // The longest single wait for tokens; the loop re-checks after it, so a debt of any size (a
    // 4 MiB read at 1 B/s is weeks) just waits instead of overflowing the monitor's timeout.
    private static readonly TimeSpan _maxRateWait = TimeSpan.FromSeconds(1);

    private readonly object _lock = new();
    private readonly SharedPrefetchBudget? _shared;
    private PrefetchLimits _limits;
    private int _decided;
    private int _running;
    private int? _credits;
    private long _inFlight;
    private long _buffered;
    private long _highWaterMark;
    private long _largestOversized;
    private long _overcommits;
    private long _waitedReservations;
    private AdmissionStage _waitingFor;
    private double _tokens;
    private long _refilledAt = Stopwatch.GetTimestamp();

    // Set under the lock when the shared budget's waiters should look again; acted on once the lock is released.
    private bool _wakeShared;

    /// <param name="credits">Reads that may be issued before <see cref="GrantCredit"/> is called; null: no credits needed.</param>
    /// <param name="shared">The budget every prefetch of the engine draws from too; null: this one's own only.</param>
    public ReadAdmission(PrefetchLimits limits, int concurrency, int? credits = null, SharedPrefetchBudget? shared = null)
    {
        _shared = shared;
        ArgumentOutOfRangeException.ThrowIfLessThan(limits.BudgetBytes, 1L);
        ArgumentOutOfRangeException.ThrowIfLessThan(concurrency, 1);
        _limits = limits;
        _decided = concurrency;
        _credits = credits;
        _tokens = limits.MaxBytesPerSecond is { } rate ? Burst(rate) : 0;
    }

    public WaitTimer BudgetWait { get; } = new();

    /// <summary>The engine's budget this one draws from too, if any.</summary>
    public SharedPrefetchBudget? Shared => _shared;

    public WaitTimer RateWait { get; } = new();

    /// <summary>The live limits in force (an immutable record, replaced whole under the lock).</summary>
    public PrefetchLimits Limits => Volatile.Read(ref _limits);

    /// <summary>The reads that may be in flight at once now: the controller's L, capped by the live limit.</summary>
    public int ConcurrencyLimit
    {
        get
        {
            lock (_lock)
            {
                return ConcurrencyLimitLocked();
            }
        }
    }

    public AdmissionSnapshot Snapshot()
    {
        lock (_lock)
        {
            return new AdmissionSnapshot(
                _limits, _inFlight, _buffered, _waitingFor, _highWaterMark, _largestOversized, _overcommits,
                _waitedReservations, _running, ConcurrencyLimitLocked());
        }
    }

    /// <summary>
    /// Blocks until a read of <paramref name="bytes"/> may be issued; the caller then owns the bytes
    /// and the slot until <see cref="ReadEnded"/>. Cancelled, it throws holding nothing.
    /// </summary>
    public void Admit(long bytes, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        cancellationToken.ThrowIfCancellationRequested();
        using var wake = cancellationToken.UnsafeRegister(static state => ((ReadAdmission)state!).Changed(), this);
        var wakeShared = false;
        try
        {
            lock (_lock)
            {
                var taken = AdmissionStage.None;
                try
                {
                    for (var stage = AdmissionStage.Credit; stage <= AdmissionStage.Slot; stage++)
                    {
                        WaitFor(stage, bytes, cancellationToken);
                        taken = stage;
                    }
                }
                catch
                {
                    Undo(taken, bytes);
                    throw;
                }
                finally
                {
                    wakeShared = TakeSharedWake();
                }
            }
        }
        finally
        {
            if (wakeShared)
            {
                _shared!.WakeWaiters(except: this);
            }
        }
    }

    /// <summary>A read ended: its slot is free, its bytes buffered as <paramref name="actualBytes"/> (null: none read).</summary>
    public void ReadEnded(long reservedBytes, long? actualBytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(reservedBytes);
        ArgumentOutOfRangeException.ThrowIfNegative(actualBytes ?? 0);
        bool wakeShared;
        lock (_lock)
        {
            if (reservedBytes > _inFlight || _running == 0)
            {
                throw new InvalidOperationException(
                    $"a read of {reservedBytes} reserved bytes ended with {_inFlight} bytes in flight and {_running} reads running; a read returns only what it was admitted with.");
            }

            _inFlight -= reservedBytes;
            _running--;
            if (actualBytes is { } actual)
            {
                _buffered += actual;
                if (actual > reservedBytes)
                {
                    // Sizes come from the snapshot the data is read under: anything but 0 is a sizing bug upstream.
                    _overcommits++;
                    _highWaterMark = Math.Max(_highWaterMark, _inFlight + _buffered);
                }
            }

            var returned = reservedBytes - (actualBytes ?? 0);
            wakeShared = _shared is not null && returned != 0 && _shared.Adjust(-returned) && returned > 0;
            Monitor.PulseAll(_lock);
        }

        if (wakeShared)
        {
            _shared!.WakeWaiters(except: this);
        }
    }

    /// <summary>
    /// The consumer took <paramref name="bytes"/> of what reads buffered: they leave this budget and the
    /// shared one. From any thread, at any time after the take (a consumer may hold bytes until it is done with them).
    /// </summary>
    public void Release(long bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        bool wakeShared;
        lock (_lock)
        {
            if (bytes > _buffered)
            {
                throw new InvalidOperationException(
                    $"Release of {bytes} bytes exceeds the {_buffered} bytes buffered; only bytes a completed read buffered can be released.");
            }

            _buffered -= bytes;
            wakeShared = _shared is not null && bytes > 0 && _shared.Adjust(-bytes);
            Monitor.PulseAll(_lock);
        }

        if (wakeShared)
        {
            _shared!.WakeWaiters(except: this);
        }
    }

    /// <summary>Rethrottles: budget, concurrency cap and MB/s cap at once.</summary>
    public void SetLimits(PrefetchLimits limits)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limits.BudgetBytes, 1L);
        lock (_lock)
        {
            Refill();
            if (limits.MaxBytesPerSecond is { } rate)
            {
                // A new cap starts with a full bucket; a changed one keeps its balance (or debt).
                _tokens = _limits.MaxBytesPerSecond is null ? Burst(rate) : Math.Min(_tokens, Burst(rate));
            }

            Volatile.Write(ref _limits, limits);
            Monitor.PulseAll(_lock);
        }
    }

    /// <summary>The controller's L (capped by the live limit).</summary>
    public void SetConcurrency(int concurrency)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(concurrency, 1);
        lock (_lock)
        {
            _decided = concurrency;
            Monitor.PulseAll(_lock);
        }
    }

    /// <summary>One more read may be issued (when credits are in use).</summary>
    public void GrantCredit()
    {
        lock (_lock)
        {
            _credits++;
            Monitor.PulseAll(_lock);
        }
    }

    /// <summary>Another prefetch returned shared budget: the admitting thread, if it waits, looks again.</summary>
    public void Wake() => Changed();

    private static double Burst(long bytesPerSecond) => Math.Max(1, bytesPerSecond * BurstTime.TotalSeconds);

    private void Changed()
    {
        lock (_lock)
        {
            Monitor.PulseAll(_lock);
        }
    }

    private int ConcurrencyLimitLocked() => Math.Min(_decided, _limits.MaxConcurrency ?? int.MaxValue);

    // Under the lock. A wait for budget or tokens is timed (the pressure view's producer-blocked share,
    // the controller's "rate-limited" hold); a wait for a credit or a slot is the policy working.
    private void WaitFor(AdmissionStage stage, long bytes, CancellationToken cancellationToken)
    {
        if (TryTake(stage, bytes, out var wait))
        {
            return;
        }

        using (stage switch { AdmissionStage.Budget => BudgetWait.Measure(), AdmissionStage.Rate => RateWait.Measure(), _ => (WaitTimer.Scope?)null })
        {
            _waitingFor = stage;
            try
            {
                do
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    if (_wakeShared)
                    {
                        // This admission left the head of the shared line and waits on (for its own
                        // budget): the next in line looks now, not once this one is admitted.
                        WakeSharedOutsideLock();
                        continue;
                    }

                    Monitor.Wait(_lock, wait);
                }
                while (!TryTake(stage, bytes, out wait));
            }
            finally
            {
                _waitingFor = AdmissionStage.None;
            }
        }

        if (stage == AdmissionStage.Budget)
        {
            _waitedReservations++;
        }
    }

    private bool TryTake(AdmissionStage stage, long bytes, out TimeSpan wait)
    {
        wait = Timeout.InfiniteTimeSpan;
        switch (stage)
        {
            case AdmissionStage.Credit:
                if (_credits is 0)
                {
                    return false;
                }

                _credits--;
                return true;
            case AdmissionStage.Budget:
                return TryReserve(bytes);
            case AdmissionStage.Rate:
                return TryTakeTokens(bytes, out wait);
            default:
                if (_running >= ConcurrencyLimitLocked())
                {
                    return false;
                }

                _running++;
                return true;
        }
    }

    // Its own budget first: a prefetch whose own budget is full does not wait in the shared line
    // (first in it, it would hold up every other prefetch for bytes only its own consumer frees).
    private bool TryReserve(long bytes)
    {
        var used = _inFlight + _buffered;
        var fits = bytes <= _limits.BudgetBytes - used;
        if (!fits && used != 0)
        {
            _wakeShared |= _shared?.Leave(this) ?? false;
            return false;
        }

        if (_shared is not null)
        {
            if (!_shared.TryReserve(this, bytes, out var lineMoved))
            {
                return false;
            }

            _wakeShared |= lineMoved;
        }

        if (fits)
        {
            _inFlight += bytes;
            _highWaterMark = Math.Max(_highWaterMark, used + bytes);
            return true;
        }

        // Bigger than the whole budget, and nothing else is held: admitted alone.
        _inFlight = bytes;
        _largestOversized = Math.Max(_largestOversized, bytes);
        return true;
    }

    // Under the lock: lets it go to pulse the shared line's waiters (their locks are never taken under
    // this one), then takes it back; the caller checks again, as a pulse meanwhile found no one waiting.
    private void WakeSharedOutsideLock()
    {
        _wakeShared = false;
        Monitor.Exit(_lock);
        try
        {
            _shared!.WakeWaiters(except: this);
        }
        finally
        {
            Monitor.Enter(_lock);
        }
    }

    private bool TakeSharedWake()
    {
        var wake = _wakeShared;
        _wakeShared = false;
        return wake;
    }

    private bool TryTakeTokens(long bytes, out TimeSpan wait)
    {
        wait = Timeout.InfiniteTimeSpan;
        if (_limits.MaxBytesPerSecond is not { } rate)
        {
            return true;
        }

        Refill();
        var needed = Math.Min(bytes, Burst(rate));
        if (_tokens >= needed)
        {
            _tokens -= bytes;
            return true;
        }

        wait = TimeSpan.FromSeconds(Math.Min(_maxRateWait.TotalSeconds, (needed - _tokens) / rate)) + TimeSpan.FromMilliseconds(1);
        return false;
    }

    private void Refill()
    {
        var now = Stopwatch.GetTimestamp();
        if (_limits.MaxBytesPerSecond is { } rate)
        {
            _tokens = Math.Min(Burst(rate), _tokens + (Stopwatch.GetElapsedTime(_refilledAt, now).TotalSeconds * rate));
        }

        _refilledAt = now;
    }

    // What a cancelled admission had taken goes back (the tokens stay spent, as a read issued would spend them).
    private void Undo(AdmissionStage taken, long bytes)
    {
        if (taken >= AdmissionStage.Credit && _credits is not null)
        {
            _credits++;
        }

        if (taken >= AdmissionStage.Budget)
        {
            _inFlight -= bytes;
            _wakeShared |= _shared is not null && bytes > 0 && _shared.Adjust(-bytes);
            Monitor.PulseAll(_lock);
        }
        else
        {
            // Cancelled while waiting in the shared line: out of it, so that it holds up no one.
            _wakeShared |= _shared?.Leave(this) ?? false;
        }
    }
}

/// <summary>One consistent reading of a <see cref="ReadAdmission"/>; Overcommits counts sizing bugs.</summary>
internal readonly record struct AdmissionSnapshot(
    PrefetchLimits Limits,
    long InFlightBytes,
    long BufferedBytes,
    AdmissionStage WaitingFor,
    long HighWaterMarkBytes,
    long LargestOversizedAdmission,
    long Overcommits,
    long WaitedReservations,
    int Running,
    int ConcurrencyLimit)
{
    public long BudgetBytes => Limits.BudgetBytes;

    public long UsedBytes => InFlightBytes + BufferedBytes;
}

/// <summary>What an admission takes, in this order (see <see cref="ReadAdmission"/>).</summary>
internal enum AdmissionStage
{
    None,
    Credit,
    Budget,
    Rate,
    Slot,
}
