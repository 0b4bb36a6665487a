namespace Indexing.Prefetcher;

/// <summary>One hand-over to the consumer: documents in read-completion order (key order within one read).</summary>
public sealed class PrefetchBatch
{
    internal PrefetchBatch(IReadOnlyList<PrefetchedDocument> documents, long totalBytes, bool waited)
    {
        Documents = documents;
        TotalBytes = totalBytes;
        Waited = waited;
    }

    public IReadOnlyList<PrefetchedDocument> Documents { get; }

    public int Count => Documents.Count;

    /// <summary>Sum of the documents' body sizes.</summary>
    public long TotalBytes { get; }

    /// <summary>Whether the consumer had to wait for this batch because nothing was ready (a stall).</summary>
    public bool Waited { get; }
}
