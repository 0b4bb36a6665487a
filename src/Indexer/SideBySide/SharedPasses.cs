using Indexing.Prefetcher;

namespace Indexing.Indexer;

/// <summary>
/// The manager's shared passes, one per collection being read: a rebuild's bulk phase joins the
/// pass over its collection while that pass's join window is open (<see cref="IndexOptions.SharedPassWindow"/>),
/// or starts one, so rebuilds that start together read the collection once. One that comes after
/// the window waits for the running pass to end and then starts (or joins) the next: reading the
/// part it missed on its own would cost the read-bound device exactly what sharing saves, and a
/// build's indexed-through key only moves forward, so it cannot take the rest first and the start
/// later. docs/decisions/0014-shared-pass.md.
/// </summary>
/// <remarks>
/// A pass's source reads with the manager's closing token, not a rebuild's: cancelling one rebuild
/// leaves its pass (its reader is disposed), and the others read on. A joiner reads a snapshot taken
/// before it started; that is safe for the tombstones it needs, since the pass's first reader holds
/// the store's tombstone low watermark at or below that snapshot while any reader reads
/// (IndexManager.Tombstones.cs). Threading: any thread; one lock, held while a pass starts its
/// source (a snapshot and the prefetcher's threads, no reads).
/// </remarks>
internal sealed class SharedPasses(BulkSourceFactory bulkSources, TimeSpan joinWindow, CancellationToken closing)
{
    private readonly Lock _lock = new();
    private readonly Dictionary<string, SharedPass> _passes = new(StringComparer.Ordinal);

    /// <summary>
    /// A source for the bulk phase of <paramref name="request"/>: a reader of the collection's shared
    /// pass (or, with a zero window, a source of its own). Waits while a pass it cannot join is
    /// running, telling <paramref name="waited"/> how long once it got one.
    /// </summary>
    public async Task<IBatchSource> JoinAsync(BulkSourceRequest request, Action<TimeSpan, string?>? waited, CancellationToken cancellationToken)
    {
        if (joinWindow == TimeSpan.Zero)
        {
            return bulkSources(request, cancellationToken);
        }

        var started = TimeProvider.System.GetTimestamp();
        string? waitedFor = null;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            Task ended;
            lock (_lock)
            {
                if (!_passes.TryGetValue(request.Collection, out var pass) || pass.Closed && pass.Readers.Count == 0)
                {
                    pass = new SharedPass(bulkSources(request, closing), joinWindow);
                    _passes[request.Collection] = pass;
                }

                if (pass.TryJoin(request.StartAfterId, request.IndexName, out var reader))
                {
                    if (waitedFor is not null)
                    {
                        waited?.Invoke(TimeProvider.System.GetElapsedTime(started), waitedFor);
                    }

                    return reader;
                }

                waitedFor ??= string.Join(", ", pass.Readers);
                ended = pass.Ended;
            }

            await ended.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }
}
