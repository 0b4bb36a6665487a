namespace Indexing.Prefetcher;

/// <summary>
/// A consistent view of one collection or key range, as the prefetcher reads it: a store snapshot
/// whose metadata scan and document reads agree with each other.
/// <para>
/// Two implementations are intended, which is why this is an interface: the RocksDB snapshot
/// source (pending the binding on this machine) and <see cref="ModelledNetworkDiskSource"/>, the
/// modelled network disk that wraps another source and adds the delays of a cloud volume.
/// </para>
/// <para>
/// In RocksDB, <see cref="ScanMetadata"/> iterates the <c>meta</c> column family under the snapshot
/// (fill_cache=false, readahead: it is read once), and <see cref="Read"/> fetches the task's bodies
/// from the <c>docs</c> column family under the same snapshot: one iterator bounded by
/// [FirstId, LastId] (lower bound inclusive, upper bound just past LastId) for a dense run, or one
/// sorted MultiGet of the task's ids. A large document is a task of its own, one Get.
/// </para>
/// <para>
/// Threading: <see cref="Read"/> is called from several read workers at once and must be safe for
/// that (a RocksDB snapshot and its ReadOptions may be shared; each call owns its iterator).
/// <see cref="ScanMetadata"/> is enumerated once, by the planner thread. Both block, which is why
/// the prefetcher calls them on dedicated threads. Dispose is called exactly once, by the owner,
/// after every Read has returned; it releases the snapshot and anything still open.
/// </para>
/// </summary>
internal interface IDocumentReadSource : IDisposable
{
    /// <summary>Etag high-water mark of the snapshot: every change after it comes from the change feed.</summary>
    long SnapshotEtag { get; }

    /// <summary>
    /// Every document's id and exact stored size, in key order (strictly increasing UTF-8 byte order),
    /// without bodies. Lazily enumerated; the enumeration observes <paramref name="cancellationToken"/>.
    /// </summary>
    IEnumerable<DocumentMeta> ScanMetadata(CancellationToken cancellationToken);

    /// <summary>
    /// Reads the task's documents, in the task's key order, appending one entry per id to
    /// <paramref name="destination"/>. Blocks until done; observes <paramref name="cancellationToken"/>
    /// (between documents at least) and throws <see cref="OperationCanceledException"/> when it fires.
    /// </summary>
    void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken);
}
