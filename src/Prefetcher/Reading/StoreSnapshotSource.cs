using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// The RocksDB read source, owning a <see cref="StoreSnapshot"/>. A one-document task is one Get;
/// up to <see cref="MultiGetMaxDocuments"/> documents, one sorted MultiGet; more, one range read
/// over [FirstId, LastId] (dense under the snapshot) that observes the token between rows, so
/// cancellation waits for at most one giant Get or one MultiGet.
/// </summary>
internal sealed class StoreSnapshotSource(StoreSnapshot snapshot, string collection, string? startAfterId) : IDocumentReadSource
{
    /// <summary>Tasks of at most this many documents are read by one MultiGet, longer ones by a range read.</summary>
    public const int MultiGetMaxDocuments = 32;

    private int _disposed;

    public long SnapshotEtag { get; } = snapshot.Etag;

    /// <summary>Test hook: called after the token check, just before the store call of a task.</summary>
    internal Action<ReadTask>? BeforeStoreCall { get; init; }

    /// <summary>Test hook: called when the store call of a task returned (or threw).</summary>
    internal Action<ReadTask>? AfterStoreCall { get; init; }

    public string? StartAfterId { get; } = startAfterId;

    public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken) =>
        snapshot.ScanMetadata(collection, StartAfterId, cancellationToken);

    public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        cancellationToken.ThrowIfCancellationRequested();
        BeforeStoreCall?.Invoke(task);
        try
        {
            if (task.DocumentCount == 1)
            {
                var body = snapshot.Get(task.FirstId) ?? throw new InvalidOperationException(
                    $"document {MessageText.Quote(task.FirstId)} is listed by the metadata scan but has no body under the snapshot at etag {SnapshotEtag}.");
                destination.Add(new PrefetchedDocument(task.FirstId, task.Etags[0], body));
                return;
            }

            var bodies = new List<DocumentBody>(task.DocumentCount);
            if (task.DocumentCount <= MultiGetMaxDocuments)
            {
                snapshot.MultiGet(task.Ids, bodies);
            }
            else
            {
                snapshot.ReadRange(task.FirstId, task.LastId, bodies, cancellationToken);
            }

            for (var i = 0; i < bodies.Count; i++)
            {
                // A body the task does not list at this position gets no etag: the reader's check then
                // names the mismatch instead of delivering a document with someone else's etag.
                var etag = i < task.Etags.Length && string.Equals(bodies[i].Id, task.Ids[i], StringComparison.Ordinal) ? task.Etags[i] : 0;
                destination.Add(new PrefetchedDocument(bodies[i].Id, etag, bodies[i].Body));
            }
        }
        finally
        {
            AfterStoreCall?.Invoke(task);
        }
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            snapshot.Dispose();
        }
    }
}
