namespace Indexing.Prefetcher;

/// <summary>
/// One document as read from the snapshot. Its JSON body is the consumer's until it releases the batch
/// (<see cref="PrefetchBatch.ReleaseBodies"/>); a body the prefetcher lent may then be read into again.
/// </summary>
public readonly record struct PrefetchedDocument(string Id, long Etag, ReadOnlyMemory<byte> Body)
{
    /// <summary>Whether <see cref="Body"/> is an array of the run's <see cref="BodyBuffers"/>, to give back on release.</summary>
    internal bool Lent { get; init; }

    /// <summary>Size of the body in bytes: what the document costs in the prefetch budget.</summary>
    public long SizeBytes => Body.Length;
}
