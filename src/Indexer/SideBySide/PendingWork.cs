namespace Indexing.Indexer;

/// <summary>
/// What an <see cref="IndexManager"/> still has to finish after the call that started it returned:
/// generations retired (by a swap or a delete) while a query still held them, which are closed once
/// their last query ends or at shutdown; and the background tasks doing that, or retrying to follow,
/// which shutdown awaits (their failures are ignored there: each records its own).
/// </summary>
/// <remarks>
/// Threading: any thread, under a lock of its own. No caller needs it together with other state of
/// the manager: each use was a short step of its own under the manager's lock before.
/// </remarks>
internal sealed class PendingWork
{
    private readonly Lock _lock = new();
    private readonly List<ServingIndex> _retired = [];
    private readonly List<Task> _background = [];

    /// <summary>Keeps <paramref name="generations"/> for closing later (each once).</summary>
    public void Retired(IEnumerable<ServingIndex> generations)
    {
        lock (_lock)
        {
            foreach (var generation in generations)
            {
                if (!_retired.Contains(generation))
                {
                    _retired.Add(generation);
                }
            }
        }
    }

    /// <summary>Forgets generations that were closed (or are being).</summary>
    public void Closed(IEnumerable<ServingIndex> generations)
    {
        lock (_lock)
        {
            _retired.RemoveAll(generations.Contains);
        }
    }

    /// <summary>The retired generations not closed yet.</summary>
    public ServingIndex[] RetiredNow()
    {
        lock (_lock)
        {
            return [.. _retired];
        }
    }

    /// <summary>Tracks background work, for shutdown to await.</summary>
    public void Track(Task task)
    {
        lock (_lock)
        {
            _background.RemoveAll(static t => t.IsCompleted);
            _background.Add(task);
        }
    }

    /// <summary>The background tasks tracked and not seen complete.</summary>
    public Task[] Tasks()
    {
        lock (_lock)
        {
            return [.. _background];
        }
    }
}
