namespace Indexing.Prefetcher;

/// <summary>
/// A consistent view of one collection or key range, as the prefetcher reads it: a store snapshot
/// whose metadata scan and document reads agree with each other. This is the prefetcher's own
/// boundary; Storage knows nothing of it (<see cref="StoreSnapshotSource"/> adapts a Storage
/// <c>StoreSnapshot</c> to it).
/// <para>
/// Two real implementations, which is why this is an interface: <see cref="StoreSnapshotSource"/>
/// (RocksDB) and <see cref="ModelledNetworkDiskSource"/>, the modelled network disk that wraps
/// another source and adds the delays of a cloud volume.
/// </para>
/// <para>
/// In RocksDB, <see cref="ScanMetadata"/> iterates the <c>meta</c> column family under the snapshot
/// (fill_cache=false, readahead: it is read once) and yields (id, size, etag); <see cref="Read"/>
/// fetches the task's bodies from the <c>docs</c> column family under the same snapshot and stamps
/// each with the etag the task carries from the scan, so <c>meta</c> is read once. A dense run is
/// one iterator that stops by comparing each key against the task's LastId (RocksDbSharp's
/// ReadOptions, where an upper bound would live, has a finalizer and no Dispose, so the store
/// creates its ReadOptions once and never per task); a short run is one sorted MultiGet; a large
/// document is a task of its own, one Get.
/// </para>
/// <para>
/// Threading: <see cref="Read"/> is called from several read workers at once and must be safe for
/// that (the snapshot and its ReadOptions are shared; each call owns its iterator).
/// <see cref="ScanMetadata"/> is enumerated once, by the planner thread. Both block, which is why
/// the prefetcher calls them on dedicated threads. A RocksDB Get, MultiGet or iterator step cannot
/// be interrupted, so the token is observed between calls and between documents: cancellation
/// waits for the read call in progress (at most the largest task's read). Dispose is called exactly
/// once, by the owner, after every Read has returned; it releases the snapshot and anything still open.
/// </para>
/// </summary>
internal interface IDocumentReadSource : IDisposable
{
    /// <summary>Etag high-water mark of the snapshot: every change after it comes from the change feed.</summary>
    long SnapshotEtag { get; }

    /// <summary>The scan starts strictly after this id (a resumed rebuild), or null for the whole collection.</summary>
    string? StartAfterId { get; }

    /// <summary>
    /// Every document's id, exact stored size and etag, in key order (strictly increasing UTF-8 byte
    /// order) and strictly after <see cref="StartAfterId"/>, without bodies. Lazily enumerated; the
    /// enumeration observes <paramref name="cancellationToken"/>.
    /// </summary>
    IEnumerable<DocumentMeta> ScanMetadata(CancellationToken cancellationToken);

    /// <summary>
    /// Reads the task's documents, in the task's key order, appending one entry per id to
    /// <paramref name="destination"/>, each with the etag the task lists for it. Blocks until done;
    /// observes <paramref name="cancellationToken"/> (between documents or store calls at least)
    /// and throws <see cref="OperationCanceledException"/> when it fires.
    /// </summary>
    void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken);
}
