namespace Indexing.Prefetcher;

/// <summary>One hand-over to the consumer: completed reads' documents, the first completed in key order first.</summary>
internal sealed class PrefetchBatch
{
    internal PrefetchBatch(IReadOnlyList<PrefetchedDocument> documents, long totalBytes, bool waited, string? handedOutThrough)
    {
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
}
