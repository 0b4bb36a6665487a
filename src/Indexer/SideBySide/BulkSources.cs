using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// Starts the batch source a rebuild's bulk phase builds the replacement from (the server passes the
/// adaptive prefetcher); called on the rebuild's thread. Read alone (<see cref="IndexOptions.SharedPassWindow"/>
/// 0), the manager disposes the source when the bulk phase ends and cancels it with the rebuild; shared
/// (<see cref="SharedPasses"/>), the pass's last reader disposes it, and only the manager's close cancels it.
/// </summary>
/// <param name="request">What to read.</param>
/// <param name="cancellationToken">Cancelled when the rebuild is cancelled (read alone) or the manager closes.</param>
/// <returns>A source over every live document of <see cref="BulkSourceRequest.Collection"/>, in a snapshot of <see cref="BulkSourceRequest.Store"/> taken now.</returns>
internal delegate IBatchSource BulkSourceFactory(BulkSourceRequest request, CancellationToken cancellationToken);

/// <summary>What a rebuild's bulk phase reads.</summary>
/// <param name="Store">The manager's store: the source must read a snapshot of it, as the catch-up phase continues from that snapshot's etag in it.</param>
/// <param name="IndexName">The index being rebuilt.</param>
/// <param name="Collection">The collection of the definition being built.</param>
/// <param name="StartAfterId">
/// Set when an interrupted bulk phase resumes: read only the ids after this one (UTF-8 key order; pass it
/// as <c>Prefetch.Start</c>'s <c>startAfterId</c>), and report it as <see cref="IBatchSource.HandedOutThrough"/>
/// before the first take. A source that starts elsewhere makes the rebuild start its bulk phase over.
/// </param>
internal sealed record BulkSourceRequest(DocumentStore Store, string IndexName, string Collection, string? StartAfterId = null);

/// <summary>
/// Told by the <see cref="IndexManager"/> what its rebuilds are doing, for its host's operators: the
/// server shows a rebuild's bulk prefetch on its admin page (as <c>rebuild &lt;index&gt;</c>) and in its
/// metrics, and lets operators rethrottle it.
/// </summary>
internal interface IRebuildObserver
{
    /// <summary>
    /// A rebuild of <paramref name="indexName"/> started its bulk phase, reading <paramref name="source"/>
    /// (as the <see cref="BulkSourceFactory"/> returned it); called on the rebuild's thread before the
    /// first batch is taken. The returned handle, if any, is disposed when the bulk phase ends, before the source is.
    /// </summary>
    IDisposable? BulkStarted(string indexName, IBatchSource source);

    /// <summary>
    /// A rebuild of <paramref name="indexName"/> started (in its first phase, or Queued when it has to wait for a slot) or entered <paramref name="phase"/>; called on the thread
    /// that moved it, so it must return quickly and not call back into the manager.
    /// </summary>
    void PhaseEntered(string indexName, RebuildPhase phase)
    {
    }
}
