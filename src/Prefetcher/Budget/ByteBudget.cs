using System.Diagnostics;

namespace Indexing.Prefetcher;

// Owns the prefetcher's memory budget in bytes: bytes reserved for reads in flight plus bytes
// buffered (read, not yet taken by the indexer) never exceed Limit. Reservations are made before a
// read is issued, sized from the snapshot's exact metadata, so the budget bounds what a read can
// bring in rather than reacting after it arrived (a count-bounded channel cannot do that: one
// 200 MB document and one 2 KB document would each count as "one").
//
// The one exception: a single reservation bigger than the whole limit is admitted alone when
// nothing else is reserved or buffered (used == 0). Without it, a document larger than the budget
// could never be read; with "alone", it is still the only thing in memory while it is held.
//
// Waiters are served strictly FIFO. If a small reservation could overtake a big one at the head,
// a steady stream of small reads would keep usage just high enough that the big one never fits:
// the giant document would starve and indexing would never finish the snapshot. Strict FIFO gives
// every reservation a bounded wait (everything ahead of it is finite), at the price of idling some
// budget while the head waits for room. That idle room is the "stall" the prefetcher avoids by
// handing the indexer whatever is already buffered, not by letting reads jump the queue.
// TryReserve follows the same rule: it fails while anyone is waiting.
//
// Accounting is split so the pressure view can tell "the disk is slow" (in flight) from "the
// indexer is slow" (buffered): ReserveAsync/TryReserve add to in flight; CompleteRead moves a
// finished read to buffered (at its actual size); CancelRead returns an unfinished read's bytes;
// Release returns bytes the consumer took. Every change that frees bytes admits waiters that now fit.
//
// Close/Dispose fails pending waiters with ObjectDisposedException, not OperationCanceledException:
// shutdown is not a cancellation the waiter asked for, and callers routinely swallow OCE as "I was
// cancelled", which would hide a budget closed too early. Later reservations and SetLimit throw
// ObjectDisposedException. Returning bytes (CompleteRead, CancelRead, Release) stays allowed after
// Close, so reads that were in flight at shutdown can unwind their accounting without throwing from
// their cleanup paths; the snapshot stays readable for the final pressure report.
//
// Threading: every method is thread-safe. State is guarded by one lock (simplicity over
// cleverness: the uncontended fast path is a lock, two compares and an add). Waiter tasks are
// completed outside the lock and run continuations asynchronously, so no caller's continuation
// runs under the lock or inline on a thread that is releasing bytes.
internal sealed class ByteBudget : IDisposable
{
    private readonly Lock _lock = new();
    private long _limit;
    private long _inFlight;
    private long _buffered;
    private long _highWaterMark;
    private long _largestOversized;
    private long _overcommits;
    private long _waitedReservations;

    // Intrusive doubly linked FIFO: O(1) append, O(1) removal of a cancelled waiter anywhere in
    // the queue, and no node allocation besides the waiter itself.
    private Waiter? _head;
    private Waiter? _tail;
    private int _waitingCount;
    private bool _closed;

    public ByteBudget(long limitBytes)
    {
        ValidateLimit(limitBytes);
        _limit = limitBytes;
    }

    // Each reading takes the lock once; read Snapshot() for several values that must agree.
    public long Limit => Snapshot().Limit;

    public long InFlightBytes => Snapshot().InFlightBytes;

    public long BufferedBytes => Snapshot().BufferedBytes;

    public int WaitingCount => Snapshot().WaitingCount;

    public long HighWaterMarkBytes => Snapshot().HighWaterMarkBytes;

    public long LargestOversizedAdmission => Snapshot().LargestOversizedAdmission;

    public long Overcommits => Snapshot().Overcommits;

    public long WaitedReservations => Snapshot().WaitedReservations;

    public ByteBudgetSnapshot Snapshot()
    {
        lock (_lock)
        {
            return new ByteBudgetSnapshot(
                _limit,
                _inFlight,
                _buffered,
                _waitingCount,
                _highWaterMark,
                _largestOversized,
                _overcommits,
                _waitedReservations);
        }
    }

    // Completes when the bytes fit (synchronously, without allocating, when they fit and nobody
    // waits). A cancelled waiter leaves the queue without holding any bytes; if the token fires
    // after the bytes were granted, the reservation stands and the caller owns it.
    public ValueTask ReserveAsync(long bytes, CancellationToken cancellationToken = default)
    {
        ThrowIfNegative(bytes, nameof(bytes));
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }

        Waiter waiter;
        lock (_lock)
        {
            ThrowIfClosed();
            if (_head is null && TryAdmitLocked(bytes))
            {
                AssertInvariants();
                return ValueTask.CompletedTask;
            }

            waiter = new Waiter(this, bytes);
            EnqueueLocked(waiter);
            AssertInvariants();
        }

        if (cancellationToken.CanBeCanceled)
        {
            // Registered outside the lock: if the token fires right now the callback runs inline
            // and takes the lock itself. The registration is stored under the lock only while the
            // waiter is still queued; otherwise whoever dequeued it never saw it, so drop it here.
            var registration = cancellationToken.UnsafeRegister(
                static (state, token) => ((Waiter)state!).Owner.CancelWaiter((Waiter)state!, token), waiter);
            var keep = false;
            lock (_lock)
            {
                if (waiter.Queued)
                {
                    waiter.Registration = registration;
                    keep = true;
                }
            }

            if (!keep)
            {
                registration.Unregister();
            }
        }

        return new ValueTask(waiter.Task);
    }

    // Never queues and never overtakes: fails while anyone is waiting, to keep the FIFO promise.
    public bool TryReserve(long bytes)
    {
        ThrowIfNegative(bytes, nameof(bytes));
        lock (_lock)
        {
            ThrowIfClosed();
            var admitted = _head is null && TryAdmitLocked(bytes);
            AssertInvariants();
            return admitted;
        }
    }

    public void CompleteRead(long reservedBytes, long actualBytes)
    {
        ThrowIfNegative(reservedBytes, nameof(reservedBytes));
        ThrowIfNegative(actualBytes, nameof(actualBytes));
        Waiter? admitted;
        lock (_lock)
        {
            ThrowIfMoreThanInFlight(reservedBytes, nameof(CompleteRead));
            _inFlight -= reservedBytes;
            _buffered += actualBytes;
            if (actualBytes > reservedBytes)
            {
                _overcommits++;
                _highWaterMark = Math.Max(_highWaterMark, _inFlight + _buffered);
            }

            admitted = AdmitWaitersLocked();
            AssertInvariants();
        }

        CompleteAdmitted(admitted);
    }

    public void CancelRead(long reservedBytes)
    {
        ThrowIfNegative(reservedBytes, nameof(reservedBytes));
        Waiter? admitted;
        lock (_lock)
        {
            ThrowIfMoreThanInFlight(reservedBytes, nameof(CancelRead));
            _inFlight -= reservedBytes;
            admitted = AdmitWaitersLocked();
            AssertInvariants();
        }

        CompleteAdmitted(admitted);
    }

    public void Release(long bytes)
    {
        ThrowIfNegative(bytes, nameof(bytes));
        Waiter? admitted;
        lock (_lock)
        {
            if (bytes > _buffered)
            {
                throw new InvalidOperationException(
                    $"Release of {bytes} bytes exceeds the {_buffered} bytes buffered; only bytes a completed read buffered can be released.");
            }

            _buffered -= bytes;
            admitted = AdmitWaitersLocked();
            AssertInvariants();
        }

        CompleteAdmitted(admitted);
    }

    // Rethrottles live. Raising admits waiters that now fit; lowering never revokes what is held,
    // it only stops new admissions until usage drops below the new limit.
    public void SetLimit(long limitBytes)
    {
        ValidateLimit(limitBytes);
        Waiter? admitted;
        lock (_lock)
        {
            ThrowIfClosed();
            _limit = limitBytes;
            admitted = AdmitWaitersLocked();
            AssertInvariants();
        }

        CompleteAdmitted(admitted);
    }

    public void Close()
    {
        Waiter? pending;
        lock (_lock)
        {
            if (_closed)
            {
                return;
            }

            _closed = true;
            pending = _head;
            for (var waiter = _head; waiter is not null; waiter = waiter.Next)
            {
                waiter.Queued = false;
                waiter.Previous = null;
            }

            _head = null;
            _tail = null;
            _waitingCount = 0;
            AssertInvariants();
        }

        while (pending is not null)
        {
            var next = pending.Next;
            pending.Next = null;
            pending.Registration.Unregister();
            pending.TrySetException(new ObjectDisposedException(
                nameof(ByteBudget), $"The byte budget was closed while a reservation of {pending.Bytes} bytes was waiting."));
            pending = next;
        }
    }

    public void Dispose() => Close();

    private void CancelWaiter(Waiter waiter, CancellationToken cancellationToken)
    {
        Waiter? admitted;
        lock (_lock)
        {
            if (!waiter.Queued)
            {
                // Already admitted (the caller owns the bytes) or failed by Close.
                return;
            }

            UnlinkLocked(waiter);

            // The cancelled waiter may have been the head blocking everyone behind it.
            admitted = AdmitWaitersLocked();
            AssertInvariants();
        }

        waiter.TrySetCanceled(cancellationToken);
        CompleteAdmitted(admitted);
    }

    private bool FitsLocked(long bytes)
    {
        var used = _inFlight + _buffered;
        return used == 0 || bytes <= _limit - used;
    }

    private bool TryAdmitLocked(long bytes)
    {
        var used = _inFlight + _buffered;
        if (bytes <= _limit - used)
        {
            _inFlight += bytes;
            _highWaterMark = Math.Max(_highWaterMark, used + bytes);
            return true;
        }

        if (used == 0)
        {
            // Bigger than the whole limit, and nothing else is held: admitted alone.
            _inFlight = bytes;
            _largestOversized = Math.Max(_largestOversized, bytes);
            return true;
        }

        return false;
    }

    // Admits from the head while the head fits, strictly in order; returns the admitted waiters
    // chained through Next, for completion outside the lock.
    private Waiter? AdmitWaitersLocked()
    {
        Waiter? first = null;
        Waiter? last = null;
        while (_head is { } head && TryAdmitLocked(head.Bytes))
        {
            UnlinkLocked(head);
            _waitedReservations++;
            if (last is null)
            {
                first = head;
            }
            else
            {
                last.Next = head;
            }

            last = head;
        }

        return first;
    }

    private static void CompleteAdmitted(Waiter? admitted)
    {
        while (admitted is not null)
        {
            var next = admitted.Next;
            admitted.Next = null;
            admitted.Registration.Unregister();
            admitted.TrySetResult();
            admitted = next;
        }
    }

    private void EnqueueLocked(Waiter waiter)
    {
        waiter.Queued = true;
        waiter.Previous = _tail;
        if (_tail is null)
        {
            _head = waiter;
        }
        else
        {
            _tail.Next = waiter;
        }

        _tail = waiter;
        _waitingCount++;
    }

    private void UnlinkLocked(Waiter waiter)
    {
        if (waiter.Previous is null)
        {
            _head = waiter.Next;
        }
        else
        {
            waiter.Previous.Next = waiter.Next;
        }

        if (waiter.Next is null)
        {
            _tail = waiter.Previous;
        }
        else
        {
            waiter.Next.Previous = waiter.Previous;
        }

        waiter.Previous = null;
        waiter.Next = null;
        waiter.Queued = false;
        _waitingCount--;
    }

    private void ThrowIfClosed() => ObjectDisposedException.ThrowIf(_closed, this);

    private void ThrowIfMoreThanInFlight(long reservedBytes, string operation)
    {
        if (reservedBytes > _inFlight)
        {
            throw new InvalidOperationException(
                $"{operation} of {reservedBytes} reserved bytes exceeds the {_inFlight} bytes in flight; a read can only return what it reserved.");
        }
    }

    private static void ThrowIfNegative(long bytes, string name)
    {
        if (bytes < 0)
        {
            throw new ArgumentOutOfRangeException(name, bytes, $"{name} is {bytes}; byte counts must be zero or more.");
        }
    }

    private static void ValidateLimit(long limitBytes)
    {
        if (limitBytes <= 0)
        {
            throw new ArgumentOutOfRangeException(
                nameof(limitBytes), limitBytes, $"limitBytes is {limitBytes}; the budget limit must be at least 1 byte.");
        }
    }

    [Conditional("DEBUG")]
    private void AssertInvariants()
    {
        Debug.Assert(_lock.IsHeldByCurrentThread, "Invariants are checked under the lock.");
        Debug.Assert(_inFlight >= 0, $"In-flight bytes went negative: {_inFlight}.");
        Debug.Assert(_buffered >= 0, $"Buffered bytes went negative: {_buffered}.");
        Debug.Assert(!_closed || _head is null, "A closed budget has no waiters.");

        // Every path that frees bytes admits from the head, so a head that fits never stays queued.
        Debug.Assert(_head is null || !FitsLocked(_head.Bytes), $"The head waiter ({_head?.Bytes} bytes) fits but is still waiting.");

        var count = 0;
        Waiter? previous = null;
        for (var waiter = _head; waiter is not null; waiter = waiter.Next)
        {
            Debug.Assert(waiter.Queued && waiter.Previous == previous, "Waiter queue links are inconsistent.");
            previous = waiter;
            count++;
        }

        Debug.Assert(previous == _tail && count == _waitingCount, $"Queue holds {count} waiters but WaitingCount is {_waitingCount}.");
    }

    // A queued reservation. It is its own TaskCompletionSource to keep the slow path at one
    // allocation. Links, Queued and Registration change only under the owner's lock while queued.
    private sealed class Waiter(ByteBudget owner, long bytes)
        : TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        public ByteBudget Owner { get; } = owner;

        public long Bytes { get; } = bytes;

        public Waiter? Previous { get; set; }

        public Waiter? Next { get; set; }

        public bool Queued { get; set; }

        public CancellationTokenRegistration Registration { get; set; }
    }
}
