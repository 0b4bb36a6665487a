namespace Indexing.Prefetcher;

/// <summary>One document as read from the snapshot: its id, its etag and its JSON body.</summary>
/// <remarks>
/// The body is the source's buffer, handed over: the prefetcher never copies it, and the consumer
/// may keep it for as long as it likes (it is not pooled).
/// </remarks>
public readonly record struct PrefetchedDocument(string Id, long Etag, ReadOnlyMemory<byte> Body)
{
    /// <summary>Size of the body in bytes: what the document costs in the prefetch budget.</summary>
    public long SizeBytes => Body.Length;
}
