namespace Indexing.Prefetcher;

/// <summary>
/// Admits at most <see cref="Limit"/> reads at once, where the limit changes live (the controller's
/// L, capped by the operator's limit). Lowering it revokes nothing: running reads finish, and new
/// ones wait until fewer than the new limit run. Unlike a semaphore, no permits are lost or owed
/// when the limit moves.
/// <para>
/// Threading: one acquirer (the planner thread, blocking), releases from any reader thread, limit
/// changes from the tick loop or an operator. State is under one lock; a blocked acquirer sleeps on
/// an event that every release and limit change sets.
/// </para>
/// </summary>
internal sealed class ConcurrencyGate(int limit) : IDisposable
{
    private readonly Lock _lock = new();
    private readonly ManualResetEventSlim _changed = new(false);
    private int _limit = Math.Max(1, limit);
    private int _running;

    public int Limit
    {
        get
        {
            lock (_lock)
            {
                return _limit;
            }
        }
    }

    /// <summary>Reads admitted and not yet released.</summary>
    public int Running
    {
        get
        {
            lock (_lock)
            {
                return _running;
            }
        }
    }

    public void SetLimit(int limit)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(limit, 1);
        lock (_lock)
        {
            _limit = limit;
        }

        _changed.Set();
    }

    public void Acquire(CancellationToken cancellationToken)
    {
        while (true)
        {
            lock (_lock)
            {
                if (_running < _limit)
                {
                    _running++;
                    return;
                }

                // Reset under the lock: a release after this point sets the event again, so the
                // wait below cannot miss it.
                _changed.Reset();
            }

            _changed.Wait(cancellationToken);
        }
    }

    public void Release()
    {
        lock (_lock)
        {
            if (_running == 0)
            {
                throw new InvalidOperationException("Release without a matching Acquire.");
            }

            _running--;
        }

        _changed.Set();
    }

    public void Dispose() => _changed.Dispose();
}
