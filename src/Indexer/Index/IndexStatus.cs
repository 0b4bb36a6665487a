namespace Indexing.Indexer;

/// <summary>What an open index is doing.</summary>
public enum IndexState
{
    /// <summary>Open and serving queries; not building and not following the change feed (changes are applied only by explicit catch-up steps).</summary>
    Idle,

    /// <summary>A bulk build from a batch source is running.</summary>
    Building,

    /// <summary>A background loop applies the store's change feed as it grows.</summary>
    Following,

    /// <summary>Following was paused: nothing is applied until it resumes (explicit catch-up steps still are).</summary>
    Paused,

    /// <summary>The index itself failed repeatedly (see <see cref="IndexStatus.LastError"/>); it still serves queries on what it holds, but writes nothing until reopened.</summary>
    Error,

    /// <summary>Disposed.</summary>
    Closed,
}

/// <summary>One immutable reading of an index's state, checkpoint, failures and metrics.</summary>
/// <param name="Name">The index's name (from its definition).</param>
/// <param name="Directory">Where the index lives.</param>
/// <param name="State">What it is doing.</param>
/// <param name="IsStale">
/// The last commit was made with another definition (<see cref="CommittedDefinitionHash"/> differs from
/// <see cref="DefinitionHash"/>): the index does not hold what the definition asks for and must be rebuilt.
/// It serves queries but refuses builds and catch-up.
/// </param>
/// <param name="BuildInterrupted">The last commit was made during a bulk build that never finished: the index is incomplete and must be rebuilt.</param>
/// <param name="DefinitionHash">Hash of the definition the index was opened with.</param>
/// <param name="CommittedDefinitionHash">Hash recorded in the last commit (a new index is committed with the definition in use when it is created).</param>
/// <param name="AppliedEtag">Every change of the store up to this etag is in the index (in memory; maybe not yet committed).</param>
/// <param name="CommittedEtag">Every change up to this etag is in the last commit: where a reopened index resumes.</param>
/// <param name="DocumentCount">Live documents in the index as last refreshed for queries.</param>
/// <param name="FailedDocuments">Documents that could not be indexed (left out and counted) since the index opened.</param>
/// <param name="LastDocumentFailure">The latest of those, naming the index, the document id and the problem.</param>
/// <param name="MismatchedValues">Field values skipped because their JSON type did not match the field (the document was indexed without them).</param>
/// <param name="LastMismatch">The latest skipped value, with its document id.</param>
/// <param name="ConsecutiveFailures">Failures of the index itself in a row (reset by a success).</param>
/// <param name="LastError">The latest failure of the index itself, or null.</param>
/// <param name="Rollbacks">Times the index went back to its last commit after a failure of the engine (a failed flush may drop buffered documents) and applied the change feed again from there.</param>
public sealed record IndexStatus(
    string Name,
    string Directory,
    IndexState State,
    bool IsStale,
    bool BuildInterrupted,
    string DefinitionHash,
    string? CommittedDefinitionHash,
    long AppliedEtag,
    long CommittedEtag,
    long DocumentCount,
    long FailedDocuments,
    string? LastDocumentFailure,
    long MismatchedValues,
    string? LastMismatch,
    int ConsecutiveFailures,
    string? LastError,
    long Rollbacks)
{
    /// <summary>Throughput and where the time went, since the index opened; its figures are public below.</summary>
    internal IndexMetrics Metrics { get; init; } = IndexMetrics.None;

    /// <summary>Documents indexed since the index opened (added or replaced; failed ones excluded).</summary>
    public long IndexedDocuments => Metrics.Documents;

    /// <summary>Their JSON body bytes.</summary>
    public long IndexedBytes => Metrics.Bytes;

    /// <summary>Deletions applied from the change feed since the index opened.</summary>
    public long AppliedDeletes => Metrics.Deletes;

    /// <summary>Documents handed to the index (by a build or the change feed), failed ones included.</summary>
    public long DocumentsRead => Metrics.DocumentsRead;

    /// <summary>Commits (checkpoints) made since the index opened.</summary>
    public long Commits => Metrics.Commits;

    /// <summary>Wall time the figures above cover: the time since the index opened.</summary>
    public TimeSpan Elapsed => Metrics.Elapsed;

    /// <summary>Time indexing threads waited for input (summed over threads, divided by their number).</summary>
    public TimeSpan StallTime => Metrics.StallTime;

    /// <summary>Time in Lucene adding, replacing and deleting documents (analysis included; summed over threads).</summary>
    public TimeSpan LuceneTime => Metrics.LuceneTime;

    /// <summary>Time spent committing.</summary>
    public TimeSpan CommitTime => Metrics.CommitTime;

    /// <summary>Documents indexed per second of <see cref="Elapsed"/>.</summary>
    public double DocumentsPerSecond => Metrics.DocumentsPerSecond;

    /// <summary>Body MB (10^6 bytes) indexed per second of <see cref="Elapsed"/>.</summary>
    public double MegabytesPerSecond => Metrics.MegabytesPerSecond;

    /// <summary>Share of <see cref="Elapsed"/> the indexing threads waited for input, 0..1.</summary>
    public double StallFraction => Metrics.StallFraction;

    /// <summary>The snapshot etag of the bulk build the last commit was made in; null when that commit was not made mid-build.</summary>
    public long? BuildSnapshotEtag { get; init; }

    /// <summary>
    /// With <see cref="BuildSnapshotEtag"/>: every document of that snapshot with an id up to this one (inclusive,
    /// UTF-8 key order) is in the last commit, so a resumed build reads only the ids after it; null when no prefix was complete.
    /// </summary>
    public string? BuildIndexedThrough { get; init; }

    /// <summary>
    /// The engine's RAM buffer now, in MB: <see cref="IndexOptions.BuildRamBufferSizeMB"/> during a
    /// bulk build, <see cref="IndexOptions.RamBufferSizeMB"/> otherwise; 0 when the engine is closed.
    /// </summary>
    public double RamBufferSizeMB { get; init; }

    /// <summary>
    /// The wait between bulk commits in force (<see cref="IndexOptions.BulkCommitShare"/> of the build's
    /// estimated duration, at most <see cref="IndexOptions.BulkCommitInterval"/>): of the running bulk
    /// build, or the last one's final value; null when no build ran since the index opened.
    /// </summary>
    public TimeSpan? BulkCommitInterval { get; init; }
}

/// <summary>Throughput of an index's writing and where its time went.</summary>
/// <param name="Documents">Documents indexed (added or replaced; failed ones excluded).</param>
/// <param name="Bytes">Their JSON body bytes.</param>
/// <param name="Deletes">Deletions applied from the change feed.</param>
/// <param name="DocumentsRead">Documents handed to the index (from a batch source or read from the store for the change feed), failed ones included: what tests count to prove a resume re-read nothing.</param>
/// <param name="Commits">Commits (checkpoints) made.</param>
/// <param name="Elapsed">Wall time the measurement covers (a build's duration, or the time since the index opened).</param>
/// <param name="StallTime">Time indexing threads waited for input (summed over threads, divided by their number).</param>
/// <param name="LuceneTime">Time in the engine adding, replacing and deleting documents (analysis included; summed over threads).</param>
/// <param name="CommitTime">Time spent committing.</param>
internal sealed record IndexMetrics(
    long Documents,
    long Bytes,
    long Deletes,
    long DocumentsRead,
    long Commits,
    TimeSpan Elapsed,
    TimeSpan StallTime,
    TimeSpan LuceneTime,
    TimeSpan CommitTime)
{
    /// <summary>Nothing measured yet.</summary>
    public static IndexMetrics None { get; } = new(0, 0, 0, 0, 0, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero);

    /// <summary>Documents per second of <see cref="Elapsed"/>.</summary>
    public double DocumentsPerSecond => Elapsed > TimeSpan.Zero ? Documents / Elapsed.TotalSeconds : 0;

    /// <summary>Body MB (10^6 bytes) per second of <see cref="Elapsed"/>.</summary>
    public double MegabytesPerSecond => Elapsed > TimeSpan.Zero ? Bytes / 1e6 / Elapsed.TotalSeconds : 0;

    /// <summary>Share of <see cref="Elapsed"/> the indexing threads waited for input, 0..1.</summary>
    public double StallFraction => Elapsed > TimeSpan.Zero ? Math.Clamp(StallTime / Elapsed, 0, 1) : 0;
}
