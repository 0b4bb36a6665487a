namespace Indexing.Prefetcher;

/// <summary>
/// A counting gate that grants its slots strictly first come, first served, to async and
/// blocking callers alike (<see cref="SemaphoreSlim"/> does not promise FIFO across both).
/// A freed slot is handed straight to the oldest waiter, so a newcomer can never overtake the
/// queue. A waiter cancelled while queued leaves the queue; one cancelled after being granted
/// keeps its slot and must release it.
/// Thread-safe: all state is under one lock, and waiters are completed with continuations run
/// asynchronously, so no caller code ever runs under that lock.
/// </summary>
internal sealed class FifoSlotGate
{
    private readonly object _lock = new();
    private readonly LinkedList<TaskCompletionSource<int>> _waiters = new();
    private int _inUse;

    public FifoSlotGate(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        Capacity = capacity;
    }

    public int Capacity { get; }

    public int InUse
    {
        get
        {
            lock (_lock)
            {
                return _inUse;
            }
        }
    }

    public int Waiting
    {
        get
        {
            lock (_lock)
            {
                return _waiters.Count;
            }
        }
    }

    /// <summary>Waits for a slot; returns how many slots are in use including the caller's.</summary>
    public ValueTask<int> AcquireAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        LinkedListNode<TaskCompletionSource<int>> node;
        lock (_lock)
        {
            if (_inUse < Capacity && _waiters.Count == 0)
            {
                _inUse++;
                return new ValueTask<int>(_inUse);
            }
            node = _waiters.AddLast(new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously));
        }
        return new ValueTask<int>(WaitAsync(node, cancellationToken));
    }

    /// <summary>Blocking form of <see cref="AcquireAsync"/>, for dedicated reader threads.</summary>
    public int Acquire(CancellationToken cancellationToken)
    {
        var pending = AcquireAsync(cancellationToken);
        return pending.IsCompleted ? pending.Result : pending.AsTask().GetAwaiter().GetResult();
    }

    public void Release()
    {
        lock (_lock)
        {
            if (_inUse == 0)
            {
                throw new InvalidOperationException("Release without a matching acquire.");
            }
            if (_waiters.First is { } oldest)
            {
                // The slot passes to the oldest waiter; the count in use does not change.
                _waiters.RemoveFirst();
                oldest.Value.SetResult(_inUse);
            }
            else
            {
                _inUse--;
            }
        }
    }

    private async Task<int> WaitAsync(LinkedListNode<TaskCompletionSource<int>> node, CancellationToken cancellationToken)
    {
        await using var registration = cancellationToken.Register(() => Abandon(node, cancellationToken));
        return await node.Value.Task.ConfigureAwait(false);
    }

    private void Abandon(LinkedListNode<TaskCompletionSource<int>> node, CancellationToken cancellationToken)
    {
        lock (_lock)
        {
            // Still queued (not yet granted): leave the queue. Once granted, the slot is the caller's.
            if (node.List is not null)
            {
                _waiters.Remove(node);
                node.Value.SetCanceled(cancellationToken);
            }
        }
    }
}
