namespace Indexing.Indexer;

/// <summary>
/// A <see cref="DocumentIndex"/>'s state (<see cref="IndexState"/>) and the pauses of its following
/// held now: the moves allowed between states, and the two that end it, Error (kept until the index
/// is reopened) and Closed.
/// </summary>
/// <remarks>
/// Threading: any thread, under a lock of its own, which is taken last (the index's write gate may
/// be held around it, never the other way round); a reading never waits for a writer of the index.
/// </remarks>
internal sealed class IndexStateMachine
{
    private readonly Lock _lock = new();
    private IndexState _state = IndexState.Idle;
    private int _pauses;

    /// <summary>The state now.</summary>
    public IndexState Current
    {
        get
        {
            lock (_lock)
            {
                return _state;
            }
        }
    }

    /// <summary>Moves to <paramref name="to"/> from one of <paramref name="from"/>; returns null when it moved, else the state that refused.</summary>
    public IndexState? TryMove(IndexState to, params IndexState[] from)
    {
        lock (_lock)
        {
            if (Array.IndexOf(from, _state) < 0)
            {
                return _state;
            }

            _state = to;
            if (to == IndexState.Following)
            {
                // A new follow starts with no pause held.
                _pauses = 0;
            }

            return null;
        }
    }

    /// <summary>Moves to <paramref name="to"/> unless the index is in Error or Closed.</summary>
    public void Set(IndexState to)
    {
        lock (_lock)
        {
            if (_state is not (IndexState.Error or IndexState.Closed))
            {
                _state = to;
            }
        }
    }

    /// <summary>Moves to Error when <paramref name="fails"/> says so of the state now, unless the index is Closed.</summary>
    public void FailIf(Func<IndexState, bool> fails)
    {
        lock (_lock)
        {
            if (_state != IndexState.Closed && fails(_state))
            {
                _state = IndexState.Error;
            }
        }
    }

    /// <summary>Closed, for good.</summary>
    public void Close()
    {
        lock (_lock)
        {
            _state = IndexState.Closed;
        }
    }

    /// <summary>Holds one more pause of following; null when held, else the state that refused (not following).</summary>
    public IndexState? TryPause()
    {
        lock (_lock)
        {
            if (_state is not (IndexState.Following or IndexState.Paused))
            {
                return _state;
            }

            _state = IndexState.Paused;
            _pauses++;
            return null;
        }
    }

    /// <summary>
    /// Releases one pause; null when released, else the state that refused (not following).
    /// <paramref name="resumed"/>: it was the last one held, and the index follows again.
    /// </summary>
    public IndexState? TryResume(out bool resumed)
    {
        lock (_lock)
        {
            resumed = false;
            if (_state is not (IndexState.Following or IndexState.Paused))
            {
                return _state;
            }

            _pauses = Math.Max(0, _pauses - 1);
            if (_pauses > 0)
            {
                return null;
            }

            _state = IndexState.Following;
            resumed = true;
            return null;
        }
    }
}
