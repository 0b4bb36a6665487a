namespace Indexing.Indexer;

/// <summary>
/// The engine's indexing threads as one pool: a bulk build's worker indexes a batch only while it
/// holds one of these slots, <see cref="IndexOptions.IndexingThreads"/> in all, granted first come
/// first served. So builds running together (a shared pass feeds several) share the threads fairly,
/// batch by batch, and a build alone uses them all; the CPU the builds take is the setting's, not the
/// setting times the number of builds. The index manager makes one for all its indexes; a
/// <see cref="DocumentIndex"/> opened alone makes its own for each build.
/// </summary>
/// <remarks>
/// Threading: workers are dedicated threads (<see cref="IndexingThread"/>), so <see cref="Enter"/>
/// blocks. One lock, waiters in a queue; the first waiter takes a slot as soon as one is free, the
/// others wait behind it even if a slot comes free for them (no overtaking).
/// </remarks>
internal sealed class IndexingSlots
{
    // An object, not a Lock: waiters wait on its monitor.
    private readonly object _lock = new();
    private readonly LinkedList<object> _waiting = new();
    private int _free;
    private long _grants;
    private long _waits;

    public IndexingSlots(int count)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        Count = count;
        _free = count;
    }

    /// <summary>Slots in all: the threads that index at once.</summary>
    public int Count { get; }

    /// <summary>Slots held now.</summary>
    public int InUse
    {
        get
        {
            lock (_lock)
            {
                return Count - _free;
            }
        }
    }

    /// <summary>Workers waiting for a slot now.</summary>
    public int Waiting
    {
        get
        {
            lock (_lock)
            {
                return _waiting.Count;
            }
        }
    }

    /// <summary>Slots granted so far, and how many of those had to wait for one.</summary>
    public (long Grants, long Waits) Granted
    {
        get
        {
            lock (_lock)
            {
                return (_grants, _waits);
            }
        }
    }

    /// <summary>Blocks until the caller holds a slot, in the order callers came; cancelled, it throws holding none.</summary>
    public void Enter(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        lock (_lock)
        {
            if (_waiting.Count == 0 && _free > 0)
            {
                _free--;
                _grants++;
                return;
            }
        }

        using var wake = cancellationToken.UnsafeRegister(static state => ((IndexingSlots)state!).WakeAll(), this);
        lock (_lock)
        {
            var turn = _waiting.AddLast(new object());
            try
            {
                while (_waiting.First != turn || _free == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    Monitor.Wait(_lock);
                }

                _free--;
                _grants++;
                _waits++;
            }
            finally
            {
                _waiting.Remove(turn);
                // The next waiter may now be first with a slot free (or this one gave up its turn).
                Monitor.PulseAll(_lock);
            }
        }
    }

    /// <summary>Gives back a slot <see cref="Enter"/> granted.</summary>
    public void Exit()
    {
        lock (_lock)
        {
            if (_free == Count)
            {
                throw new InvalidOperationException($"an indexing slot was given back with all {Count} free; give back only what Enter granted.");
            }

            _free++;
            Monitor.PulseAll(_lock);
        }
    }

    private void WakeAll()
    {
        lock (_lock)
        {
            Monitor.PulseAll(_lock);
        }
    }
}
