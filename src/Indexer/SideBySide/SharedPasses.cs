using Indexing.Prefetcher;
using Indexing.Storage;

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
/// before it started, S; that is safe for the tombstones it needs: a pass takes joiners only while
/// one of its readers still reads, every reader holds the store's tombstone low watermark at or
/// below S (0 from its admission until its build's first commit records S), and the joiner holds 0
/// from its own admission, so no tombstone above S is purged before the joiner holds S itself
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
    /// running, telling <paramref name="note"/> when it begins to wait and how long it waited.
    /// </summary>
    public async Task<IBatchSource> JoinAsync(BulkSourceRequest request, Action<string>? note, CancellationToken cancellationToken)
    {
        if (joinWindow == TimeSpan.Zero)
        {
            return bulkSources(request, cancellationToken);
        }

        var started = TimeProvider.System.GetTimestamp();
        var waited = false;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            Task ended;
            lock (_lock)
            {
                if (!_passes.TryGetValue(request.Collection, out var pass) || pass.Closed && pass.Readers.Count == 0)
                {
                    var source = bulkSources(request, closing);
                    if (DocumentIds.CompareKeyOrder(request.StartAfterId, source.HandedOutThrough) < 0)
                    {
                        // The source starts after a later key than asked: nobody can share it, and the
                        // bulk phase starts over with it alone (RebuildPhases.BulkAsync says so).
                        return source;
                    }

                    pass = new SharedPass(source, joinWindow);
                    _passes[request.Collection] = pass;
                }

                if (pass.TryJoin(request.StartAfterId, request.IndexName, out var reader))
                {
                    if (waited)
                    {
                        note?.Invoke($"waited {TimeProvider.System.GetElapsedTime(started).TotalSeconds:0.#} s for it");
                    }

                    return reader;
                }

                ended = pass.Ended;
                if (!waited)
                {
                    waited = true;
                    note?.Invoke($"waiting for the shared pass over its collection (feeding {string.Join(", ", pass.Readers)}) to end, having come after its join window");
                }
            }

            await ended.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
    }
}
