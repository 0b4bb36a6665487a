using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Holds the reads of the tasks <paramref name="holds"/> picks (by default the run's first task)
/// until the test lets them finish (observing the token).
/// </summary>
internal sealed class HoldTaskSource(InMemoryReadSourceDouble inner, ManualResetEventSlim mayFinish, Func<ReadTask, bool>? holds = null) : IDocumentReadSource
{
    public long SnapshotEtag => inner.SnapshotEtag;

    public string? StartAfterId => inner.StartAfterId;

    public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken) => inner.ScanMetadata(cancellationToken);

    public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
    {
        if ((holds?.Invoke(task) ?? task.Sequence == 0) && !mayFinish.Wait(Strategies.Patience, cancellationToken))
        {
            throw new TimeoutException($"The test never let the read of task {task.Sequence} ({MessageText.Quote(task.FirstId)}..) finish.");
        }

        inner.Read(task, destination, cancellationToken);
    }

    public void Dispose() => inner.Dispose();
}
