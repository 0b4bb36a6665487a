using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// A read source as on a network-attached cloud disk: each task, one request stream, waits
/// <see cref="NetworkDiskModel.Read"/> after the inner read (the metadata scan does not). Owns the inner source.
/// </summary>
internal sealed class ModelledNetworkDiskSource(IDocumentReadSource inner, NetworkDiskModel model) : IDocumentReadSource
{
    private int _disposed;

    public long SnapshotEtag => inner.SnapshotEtag;

    public string? StartAfterId => inner.StartAfterId;

    public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken) => inner.ScanMetadata(cancellationToken);

    public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        inner.Read(task, destination, cancellationToken);
        model.Read(task.Bytes, cancellationToken);
    }

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            inner.Dispose();
        }
    }
}
