namespace Indexing.Prefetcher;

// An IBatchSource over documents in memory, each take returning at once: the "IndexOnly" bound of
// the measurements (input costing nothing, so the indexer alone is measured). Here, not in a test
// project, because the indexer tests and the measurement engine both use it.
//
// Its totals are known from the start (Pressure.DocumentsTotal and BytesTotal). Documents listed
// in key order (inKeyOrder) go out as a rebuild's do: each batch says the last id it holds
// (HandedOutThrough), so a build from it commits during its bulk phase on the cadence a build from
// the prefetcher does (a build commits only when that key has moved). The IndexOnly bound runs so,
// or it would leave out the bulk commits every rebuild makes, and their flushes and merges. Without
// it the order is the caller's (the indexer tests list documents in any order) and nothing is said.
internal sealed class MemoryBatchSource(IReadOnlyList<PrefetchedDocument> documents, long snapshotEtag, bool inKeyOrder = false) : IBatchSource
{
    private int _next;
    private string? _handedOutThrough;

    public PrefetchPressure Pressure { get; } = new()
    {
        Strategy = "memory",
        DocumentsTotal = documents.Count,
        BytesTotal = documents.Sum(d => d.SizeBytes),
    };

    public long SnapshotEtag { get; } = snapshotEtag;

    /// <summary>With the documents in key order, the last id handed out; else null.</summary>
    public string? HandedOutThrough => Volatile.Read(ref _handedOutThrough);

    public PrefetchPipeline? Pipeline => null;

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

        var through = inKeyOrder ? batch[^1].Id : null;
        Volatile.Write(ref _handedOutThrough, through);
        return ValueTask.FromResult<PrefetchBatch?>(new PrefetchBatch(batch, bytes, waited: false, handedOutThrough: through));
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}
