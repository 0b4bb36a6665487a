namespace Indexing.Prefetcher;

/// <summary>
/// One byte budget that every prefetch of an engine draws from, besides its own live
/// <see cref="PrefetchLimits.BudgetBytes"/>: a read is admitted only when it fits both, and releasing
/// returns bytes to both, so all prefetches together hold at most <see cref="BudgetBytes"/>, however
/// many run. A read larger than the whole budget is admitted alone, when no prefetch holds anything,
/// so the bound is passed by less than one document. Waiters are served first come first served: a
/// prefetch that could not reserve queues, and no other may reserve past it until it has, so a giant
/// waiting for the budget to empty is not starved by other prefetches' small reads. Every holder's
/// bytes leave (reads complete, consumers take), so the queue always moves.
/// <para>
/// Threading: called by <see cref="ReadAdmission"/> under its own lock (the admission's lock, then
/// this one: never the other way round), and <see cref="WakeWaiters"/> with no lock held, so that
/// pulsing another admission's lock cannot deadlock with it. A waiter checks under its admission's
/// lock and waits on it; the releaser takes its bytes off first and pulses after, so no wake is lost.
/// </para>
/// </summary>
internal sealed class SharedPrefetchBudget
{
    private readonly Lock _lock = new();
    private readonly List<ReadAdmission> _waiting = [];
    private long _held;
    private long _highWaterMark;
    private long _largestOversized;
    private long _waitedReservations;

    public SharedPrefetchBudget(long budgetBytes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(budgetBytes, 1L);
        BudgetBytes = budgetBytes;
    }

    /// <summary>What every prefetch together holds at most (bytes in flight plus buffered).</summary>
    public long BudgetBytes { get; }

    /// <summary>Bytes every prefetch holds now.</summary>
    public long HeldBytes
    {
        get
        {
            lock (_lock)
            {
                return _held;
            }
        }
    }

    public SharedBudgetSnapshot Snapshot()
    {
        lock (_lock)
        {
            return new SharedBudgetSnapshot(BudgetBytes, _held, _highWaterMark, _largestOversized, _waiting.Count, _waitedReservations);
        }
    }

    /// <summary>
    /// Reserves <paramref name="bytes"/> for <paramref name="admission"/> if it is first in line and
    /// they fit (or nothing is held); otherwise it joins the line (once) and the caller waits on its
    /// own lock until <see cref="WakeWaiters"/> pulses it. <paramref name="lineMoved"/>: it left the
    /// head of the line, so the next waiter should look again (call <see cref="WakeWaiters"/> once no lock is held).
    /// </summary>
    public bool TryReserve(ReadAdmission admission, long bytes, out bool lineMoved)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        lineMoved = false;
        lock (_lock)
        {
            var place = _waiting.IndexOf(admission);
            var first = _waiting.Count == 0 || place == 0;
            if (first && (bytes <= BudgetBytes - _held || _held == 0))
            {
                if (bytes > BudgetBytes)
                {
                    _largestOversized = Math.Max(_largestOversized, bytes);
                }
                else
                {
                    _highWaterMark = Math.Max(_highWaterMark, _held + bytes);
                }

                _held += bytes;
                if (place == 0)
                {
                    _waiting.RemoveAt(0);
                    _waitedReservations++;
                    lineMoved = _waiting.Count > 0;
                }

                return true;
            }

            if (place < 0)
            {
                _waiting.Add(admission);
            }

            return false;
        }
    }

    /// <summary>
    /// <paramref name="admission"/> stops waiting without a reservation (cancelled, or its own budget no
    /// longer has room). Returns whether the line moved (it was first), as <see cref="TryReserve"/>.
    /// </summary>
    public bool Leave(ReadAdmission admission)
    {
        lock (_lock)
        {
            var place = _waiting.IndexOf(admission);
            if (place >= 0)
            {
                _waiting.RemoveAt(place);
            }

            return place == 0 && _waiting.Count > 0;
        }
    }

    /// <summary>
    /// Bytes a prefetch held change by <paramref name="delta"/>: negative when a consumer took them or a
    /// read ended with less (or nothing) read, positive only for a read that brought more than it
    /// reserved (a sizing bug its admission counts). Returns whether anyone waits, to be woken.
    /// </summary>
    public bool Adjust(long delta)
    {
        lock (_lock)
        {
            if (_held + delta < 0)
            {
                throw new InvalidOperationException(
                    $"returning {-delta} bytes to the shared prefetch budget that holds {_held}; a prefetch returns only what it reserved.");
            }

            _held += delta;
            if (delta > 0)
            {
                _highWaterMark = Math.Max(_highWaterMark, _held);
            }

            return _waiting.Count > 0;
        }
    }

    /// <summary>Pulses every waiting admission but <paramref name="except"/> to look again. Call with no lock held.</summary>
    public void WakeWaiters(ReadAdmission? except = null)
    {
        ReadAdmission[] waiting;
        lock (_lock)
        {
            if (_waiting.Count == 0)
            {
                return;
            }

            waiting = [.. _waiting];
        }

        foreach (var admission in waiting)
        {
            if (!ReferenceEquals(admission, except))
            {
                admission.Wake();
            }
        }
    }
}

/// <summary>One consistent reading of a <see cref="SharedPrefetchBudget"/>: the high-water mark leaves out oversized reads admitted alone.</summary>
internal readonly record struct SharedBudgetSnapshot(
    long BudgetBytes,
    long HeldBytes,
    long HighWaterMarkBytes,
    long LargestOversizedAdmission,
    int Waiting,
    long WaitedReservations);
