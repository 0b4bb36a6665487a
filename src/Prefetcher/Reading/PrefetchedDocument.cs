namespace Indexing.Prefetcher;

/// <summary>One document as read from the snapshot; its JSON body is the source's buffer, handed over (never pooled).</summary>
internal readonly record struct PrefetchedDocument(string Id, long Etag, ReadOnlyMemory<byte> Body)
{
    /// <summary>Size of the body in bytes: what the document costs in the prefetch budget.</summary>
    public long SizeBytes => Body.Length;
}
