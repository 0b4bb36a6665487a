namespace Indexing.Indexer;

/// <summary>
/// Where a rebuild is. Each value means one thing; Done, Failed and Cancelled are final. A rebuild
/// that has to wait for a slot (<see cref="IndexOptions.MaxConcurrentRebuilds"/>) starts in Queued and
/// then moves to the phase it starts its work in (Bulk, or a later one when it resumes).
/// </summary>
public enum RebuildPhase
{
    /// <summary>Reading every document of a store snapshot into the replacement (the prefetcher feeds it).</summary>
    Bulk,

    /// <summary>Applying the change feed after the snapshot until the replacement is nearly current.</summary>
    CatchUp,

    /// <summary>Applying the last changes, committing and switching the catalog; then draining and deleting the old generation.</summary>
    Swapping,

    /// <summary>The replacement serves; the old generation is gone (or goes once its last query ends, or at the next start: see the note).</summary>
    Done,

    /// <summary>The rebuild failed (see the error); the old generation still serves and the replacement was removed.</summary>
    Failed,

    /// <summary>Cancelled: the old generation still serves and the replacement was removed.</summary>
    Cancelled,

    /// <summary>
    /// Waiting, first come first served, until fewer than <see cref="IndexOptions.MaxConcurrentRebuilds"/>
    /// rebuilds run: nothing is read yet and no prefetch is held. The intent is in the catalog, so a
    /// restart queues it again. Appended: the values before it keep their numbers.
    /// </summary>
    Queued = 6,
}

/// <summary>One reading of a rebuild's progress (a new instance each time it is asked for).</summary>
/// <param name="IndexName">The index being rebuilt.</param>
/// <param name="Generation">The replacement's generation number.</param>
/// <param name="Phase">Where it is.</param>
/// <param name="Reason">Why it runs ("definition changed", "requested", "resumed after restart", "new index").</param>
/// <param name="StartedAt">When this rebuild (or its resumption) started.</param>
/// <param name="DocumentsDone">Documents handed to the replacement's indexing in the bulk phase (a resumed one: those it skipped included); the last few takes may not be indexed yet (see <see cref="DocumentsIndexed"/>).</param>
/// <param name="DocumentsTotal">Documents of the collection in the bulk phase's snapshot (exact once planning is complete; a resumed one: the skipped ones plus those after its key).</param>
/// <param name="BytesDone">Body bytes handed to the replacement's indexing in the bulk phase (a resumed one: by this run, after its key); the last few takes may not be indexed yet (see <see cref="BytesIndexed"/>).</param>
/// <param name="BytesTotal">Body bytes of the snapshot's collection (exact once planning is complete; a resumed one: after its key).</param>
/// <param name="SnapshotEtag">The bulk phase's snapshot etag; the catch-up applies the change feed after it.</param>
/// <param name="AppliedEtag">The replacement holds every change up to this etag.</param>
/// <param name="LagEtags">The store's last etag minus <paramref name="AppliedEtag"/>.</param>
/// <param name="Eta">Estimated time to the end of the bulk phase; null when unknown.</param>
/// <param name="PhaseTimes">Wall time of each phase reached so far.</param>
/// <param name="Error">The failure, when <paramref name="Phase"/> is Failed.</param>
/// <param name="Note">What an operator should know that did not fail the rebuild, notes joined by "; " (e.g. a drain that timed out, a failed cleanup of the old generation after the switch).</param>
/// <param name="SwapSteps">How long each step of the swap took, e.g. "last changes 12 ms, commit 310 ms, align 4 ms, catalog switch 3 ms, drain 0 ms, close old 95 ms, delete old 40 ms".</param>
/// <param name="Prefetch">The bulk phase's prefetch pressure (its last reading once the bulk phase ended).</param>
public sealed record RebuildProgress(
    string IndexName,
    int Generation,
    RebuildPhase Phase,
    string Reason,
    DateTimeOffset StartedAt,
    long DocumentsDone,
    long DocumentsTotal,
    long BytesDone,
    long BytesTotal,
    long SnapshotEtag,
    long AppliedEtag,
    long LagEtags,
    TimeSpan? Eta,
    IReadOnlyDictionary<RebuildPhase, TimeSpan> PhaseTimes,
    string? Error,
    string? Note,
    string? SwapSteps,
    Prefetcher.PrefetchPressure? Prefetch)
{
    /// <summary>
    /// Set when this run resumed an interrupted bulk phase (after a crash or a restart) instead of
    /// starting it over: every document up to this id was already indexed, and the run read only the ids after it.
    /// </summary>
    public string? ResumedAfter { get; init; }

    /// <summary>Documents a resumed bulk phase did not read again: those the replacement already held up to <see cref="ResumedAfter"/>.</summary>
    public long DocumentsSkipped { get; init; }

    /// <summary>
    /// Of <see cref="DocumentsDone"/>, those the indexing threads are through with (added, or failed
    /// and counted), the skipped ones included: what the replacement holds, if not yet committed.
    /// Behind DocumentsDone by the takes waiting for or in an indexing thread (up to 2 x
    /// <see cref="IndexOptions.IndexingThreads"/> + 1 takes, each up to <see cref="IndexOptions.TakeMaxBytes"/>
    /// or one giant); equal to it once the bulk phase completed. A run that failed or was cancelled
    /// in its bulk phase keeps what its threads reached.
    /// </summary>
    public long DocumentsIndexed { get; init; }

    /// <summary>Of <see cref="BytesDone"/>, the body bytes of the documents the indexing threads added (this run's, as BytesDone; a failed document's are counted once the bulk phase completed, when it equals BytesDone).</summary>
    public long BytesIndexed { get; init; }

    /// <summary>
    /// The wait between the bulk phase's commits (<see cref="IndexOptions.BulkCommitShare"/> of its
    /// estimated duration, at most <see cref="IndexOptions.BulkCommitInterval"/>): in force while it
    /// runs, its last value once it ended; null when this run had no bulk phase. A crash costs a
    /// resume at most about this much indexing.
    /// </summary>
    public TimeSpan? BulkCommitInterval { get; init; }

    /// <summary>Commits the bulk phase made while it ran (each recording the key a resume reads after; its first and last commit not counted).</summary>
    public long BulkCommits { get; init; }

    /// <summary>
    /// While <see cref="Phase"/> is Queued: its place in the queue of rebuilds waiting for a slot, 1
    /// for the next to start; null in every other phase.
    /// </summary>
    public int? QueuePosition { get; init; }

    /// <summary>Whether the rebuild has ended (done, failed or cancelled).</summary>
    public bool IsFinished => Phase is RebuildPhase.Done or RebuildPhase.Failed or RebuildPhase.Cancelled;
}

/// <summary>
/// The points of a rebuild a test can stop at (an internal hook), in the order they are reached.
/// A crash at any of them must leave an index that serves complete results after a restart.
/// </summary>
internal enum RebuildPoint
{
    IntentPersisted,
    BulkStarted,
    BulkBatchTaken,
    BulkCheckpointed, // after each commit the bulk phase makes while it runs (not the last)
    BulkCommitted,
    CatchUpPersisted,
    CatchUpStep,
    SwapPersisted,
    SwapCommitted,
    CatalogTempWritten,
    CatalogSwitched,
    OldDrained,
    OldDeleted,
}

/// <summary>
/// The points of an index's delete a test can stop at (an internal hook), in the order they are
/// reached. A crash at any of them must leave either the whole index (before CatalogWritten) or
/// nothing of it (from CatalogWritten on, once the next open cleaned up).
/// </summary>
internal enum DeletePoint
{
    RebuildStopped,     // following paused, a running rebuild cancelled and ended
    CatalogTempWritten, // the catalog without the entry is written, not yet renamed into place
    CatalogWritten,     // the commit point: the catalog no longer names the index
    GenerationsClosed,
    GenerationDeleted,  // after each generation directory is deleted (the index directory still exists)
    Deleted,            // the index directory is gone
}
