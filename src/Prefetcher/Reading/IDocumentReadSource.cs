using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// A consistent view of one collection, as the prefetcher reads it: a snapshot whose metadata scan
/// and document reads agree. The prefetcher's own boundary (Storage knows nothing of it), with two
/// real implementations: <see cref="StoreSnapshotSource"/> (RocksDB) and
/// <see cref="ModelledNetworkDiskSource"/>, which wraps another and adds a cloud volume's delays.
/// <para>
/// Threading: <see cref="Read"/> is called by several reader threads at once (each call owns its
/// iterator); <see cref="ScanMetadata"/> is enumerated once, by the planner. Both block. A RocksDB
/// Get, MultiGet or iterator step cannot be interrupted, so the token is observed between calls and
/// documents: cancellation waits for the call in progress. Dispose is called once, by the owner,
/// after every Read returned; it releases the snapshot and anything still open.
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
    IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken);

    /// <summary>
    /// Reads the task's documents, in the task's key order, appending one entry per id to
    /// <paramref name="destination"/>, each with the etag the task lists for it. Blocks until done;
    /// observes <paramref name="cancellationToken"/> (between documents or store calls at least)
    /// and throws <see cref="OperationCanceledException"/> when it fires.
    /// </summary>
    void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken);
}
