using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// One collection of a snapshot, as the prefetcher reads it. <see cref="Read"/> is called by several
/// reader threads at once, <see cref="ScanMetadata"/> by the planner; both block, observing the token
/// between store calls. Dispose is called once, after every Read returned.
/// </summary>
internal interface IDocumentReadSource : IDisposable
{
    /// <summary>Etag high-water mark of the snapshot: every change after it comes from the change feed.</summary>
    long SnapshotEtag { get; }

    /// <summary>The scan starts strictly after this id (a resumed rebuild), or null for the whole collection.</summary>
    string? StartAfterId { get; }

    /// <summary>Every document's metadata, in key order after <see cref="StartAfterId"/>; lazily enumerated.</summary>
    IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken);

    /// <summary>Appends the task's documents to <paramref name="destination"/> in its order, each with the etag it lists.</summary>
    void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken);
}
