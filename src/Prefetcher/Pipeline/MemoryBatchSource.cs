namespace Indexing.Prefetcher;

// An IBatchSource over documents in memory, each take returning at once: the "IndexOnly" bound of
// the measurements (input costs nothing, so the indexer alone is measured). Here, not in a test
// project, because the indexer tests and the measurement engine both use it.
internal sealed class MemoryBatchSource(IReadOnlyList<PrefetchedDocument> documents, long snapshotEtag) : IBatchSource
{
    private int _next;

    public PrefetchPressure Pressure { get; } = new() { Strategy = "memory" };

    public long SnapshotEtag { get; } = snapshotEtag;

    public string? HandedOutThrough => null;

    /// <summary>Documents handed out so far.</summary>
    public int Taken => Volatile.Read(ref _next);

    public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        if (_next >= documents.Count)
        {
            return ValueTask.FromResult<PrefetchBatch?>(null);
        }

        var batch = new List<PrefetchedDocument>();
        long bytes = 0;
        while (_next < documents.Count && batch.Count < maxDocuments && (batch.Count == 0 || bytes + documents[_next].SizeBytes <= maxBytes))
        {
            bytes += documents[_next].SizeBytes;
            batch.Add(documents[_next++]);
        }

        return ValueTask.FromResult<PrefetchBatch?>(new PrefetchBatch(batch, bytes, waited: false, handedOutThrough: null));
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}
