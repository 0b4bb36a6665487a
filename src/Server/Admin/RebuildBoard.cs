using Indexing.Indexer;

namespace Indexing.Server.Admin;

/// <summary>
/// Progress of the index rebuilds running in this server, for the admin page's progress bars
/// (<c>GET /admin/rebuilds</c>). A rebuild registers a callback that reads its progress when asked,
/// and disposes the registration when it ends. Threading: any thread.
/// </summary>
internal sealed class RebuildBoard
{
    private readonly Lock _lock = new();
    private Entry[] _rebuilds = [];

    /// <summary>Shows what <paramref name="readProgress"/> returns (read on each request) until the handle is disposed.</summary>
    public IDisposable Register(Func<RebuildBar> readProgress)
    {
        ArgumentNullException.ThrowIfNull(readProgress);
        return RegisterMany(() => [readProgress()]);
    }

    /// <summary>Shows the rebuilds <paramref name="readProgress"/> lists (read on each request) until the handle is disposed.</summary>
    public IDisposable RegisterMany(Func<IEnumerable<RebuildBar>> readProgress)
    {
        ArgumentNullException.ThrowIfNull(readProgress);
        var entry = new Entry(readProgress);
        lock (_lock)
        {
            Volatile.Write(ref _rebuilds, [.. _rebuilds, entry]);
        }

        return new Registration(() =>
        {
            lock (_lock)
            {
                Volatile.Write(ref _rebuilds, [.. _rebuilds.Where(r => !ReferenceEquals(r, entry))]);
            }
        });
    }

    /// <summary>Every registered rebuild's progress, read now.</summary>
    public IReadOnlyList<RebuildBar> Read() => [.. Volatile.Read(ref _rebuilds).SelectMany(r => r.Read())];

    private sealed record Entry(Func<IEnumerable<RebuildBar>> Read);

    private sealed class Registration(Action unregister) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                unregister();
            }
        }
    }
}

/// <summary>One rebuild's progress as the admin page draws it.</summary>
/// <param name="Index">The index being rebuilt.</param>
/// <param name="Phase">Where it is; serialised as the rebuild endpoint serialises it ("queued", "bulk", "catchUp", "done").</param>
/// <param name="DocumentsDone">Documents indexed so far.</param>
/// <param name="DocumentsTotal">Documents to index; null while not yet known.</param>
/// <param name="Eta">Time left at the current rate; null when unknown.</param>
/// <param name="ResumedAfter">Set when the run resumed an interrupted bulk phase: the id it read after.</param>
/// <param name="DocumentsSkipped">Documents a resumed bulk phase did not read again (counted in <paramref name="DocumentsDone"/>).</param>
/// <param name="BulkCommitInterval">The wait between the bulk phase's commits (what a crash would cost a resume at most); null when unknown.</param>
/// <param name="QueuePosition">While queued: its place in the queue for a rebuild slot, 1 for the next to start; otherwise null.</param>
internal sealed record RebuildBar(
    string Index,
    RebuildPhase Phase,
    long DocumentsDone,
    long? DocumentsTotal,
    TimeSpan? Eta,
    string? ResumedAfter = null,
    long DocumentsSkipped = 0,
    TimeSpan? BulkCommitInterval = null,
    int? QueuePosition = null);
