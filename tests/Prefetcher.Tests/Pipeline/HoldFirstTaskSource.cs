using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>Holds the read of the run's first task until the test lets it finish (observing the token).</summary>
internal sealed class HoldFirstTaskSource(InMemoryReadSourceDouble inner, ManualResetEventSlim firstTaskMayFinish) : IDocumentReadSource
{
    public long SnapshotEtag => inner.SnapshotEtag;

    public string? StartAfterId => inner.StartAfterId;

    public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken) => inner.ScanMetadata(cancellationToken);

    public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
    {
        if (task.Sequence == 0 && !firstTaskMayFinish.Wait(Strategies.Patience, cancellationToken))
        {
            throw new TimeoutException("The test never let the first task finish.");
        }

        inner.Read(task, destination, cancellationToken);
    }

    public void Dispose() => inner.Dispose();
}
