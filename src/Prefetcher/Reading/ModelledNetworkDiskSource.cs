using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// A read source that behaves like one on a network-attached cloud disk: it reads through the
/// inner source, then waits <see cref="NetworkDiskModel.Read"/> for the task's bytes, one modelled
/// request per task (a MultiGet or a bounded iteration is one request stream). The metadata scan,
/// small and sequential, passes through without delay. Owns the inner source (disposed once).
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
