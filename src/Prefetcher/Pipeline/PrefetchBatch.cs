namespace Indexing.Prefetcher;

/// <summary>One hand-over to the consumer: completed reads' documents, the first completed in key order first.</summary>
public sealed class PrefetchBatch
{
    private readonly BodyBuffers? _buffers;
    private int _released;

    internal PrefetchBatch(
        IReadOnlyList<PrefetchedDocument> documents, long totalBytes, bool waited, string? handedOutThrough, BodyBuffers? buffers = null)
    {
        _buffers = buffers;
        Documents = documents;
        TotalBytes = totalBytes;
        Waited = waited;
        HandedOutThrough = handedOutThrough;
    }

    public IReadOnlyList<PrefetchedDocument> Documents { get; }

    public int Count => Documents.Count;

    /// <summary>Sum of the documents' body sizes.</summary>
    public long TotalBytes { get; }

    /// <summary>Whether the consumer had to wait for this batch because nothing was ready (a stall).</summary>
    public bool Waited { get; }

    /// <summary>
    /// The watermark once this batch is taken: every document of the run with an id up to this one
    /// (in key order) is in this batch or an earlier one; null (or the start key of a resumed run)
    /// until a prefix is complete. Checkpoint it once everything taken so far is indexed; a resumed
    /// run starts after it, reading again only documents after it that were taken before.
    /// </summary>
    public string? HandedOutThrough { get; }

    /// <summary>
    /// The consumer is done with the documents' bodies: the arrays the prefetcher lent go back to it,
    /// to be read into again. Call it once nothing refers to a body of this batch any more (the
    /// indexer does, after the batch is written); a body read after it may hold another document's
    /// bytes. Optional: a batch never released leaves its arrays to the garbage collector. Idempotent.
    /// </summary>
    public void ReleaseBodies()
    {
        if (_buffers is null || Interlocked.Exchange(ref _released, 1) != 0)
        {
            return;
        }

        foreach (var document in Documents)
        {
            if (document.Lent)
            {
                _buffers.Return(document.Body);
            }
        }
    }
}
