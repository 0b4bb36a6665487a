using System.Diagnostics;

namespace Indexing.Indexer;

/// <summary>
/// A <see cref="DocumentIndex"/>'s checkpoint bookkeeping: the etag applied and the etag committed;
/// the build marker the next commit records (the build's snapshot etag S, its indexed-through key
/// and the documents through that key); the last commit's build marker as readers see it; and what
/// is uncommitted (bytes, time since the last commit), which makes a commit due; and whether a
/// commit may be made at all (not after the engine failed, until a rollback).
/// </summary>
/// <remarks>
/// Threading: every change is made by the owning index under its write gate (the caller holds it;
/// this class takes no lock of its own), except the engine-failed flag, which any writing thread
/// sets. The applied and committed values and the uncommitted bytes
/// are published with Volatile and Interlocked and may be read from any thread (status, the
/// tombstone watermark); the pending build marker is read under the gate.
/// </remarks>
internal sealed class IndexCheckpoints
{
    private const long NoBuild = -1;

    private long _appliedEtag;
    private long _committedEtag;
    private long? _buildSnapshotEtag;
    private string? _buildIndexedThrough; // the build's key to record with its next commit
    private long? _buildIndexedCount; // the documents through _buildIndexedThrough, recorded with it
    private string? _committedIndexedThrough; // the last commit's BuildIndexedThrough
    private long _committedBuildSnapshotEtag = NoBuild; // the last commit's BuildSnapshotEtag
    private long _uncommittedBytes;
    private long _lastCommitTimestamp = Stopwatch.GetTimestamp();
    private int _engineFailed; // 1 once the engine failed since the last commit or rollback

    /// <summary>Starts from the checkpoint the engine opened at, or from nothing for a new index.</summary>
    public IndexCheckpoints(IndexCheckpoint? opened)
    {
        if (opened is { } checkpoint)
        {
            _appliedEtag = _committedEtag = checkpoint.Etag;
            _buildSnapshotEtag = checkpoint.BuildSnapshotEtag;
            _buildIndexedThrough = _committedIndexedThrough = checkpoint.BuildIndexedThrough;
            _buildIndexedCount = checkpoint.BuildIndexedCount;
            _committedBuildSnapshotEtag = checkpoint.BuildSnapshotEtag ?? NoBuild;
        }
    }

    /// <summary>The etag of the last change applied (committed or not). Set under the write gate.</summary>
    public long AppliedEtag
    {
        get => Volatile.Read(ref _appliedEtag);
        set => Volatile.Write(ref _appliedEtag, value);
    }

    /// <summary>The etag the last commit recorded.</summary>
    public long CommittedEtag => Volatile.Read(ref _committedEtag);

    /// <summary>The last commit's build snapshot etag, or null when it is no build's.</summary>
    public long? CommittedBuildSnapshotEtag => Volatile.Read(ref _committedBuildSnapshotEtag) is var build and not NoBuild ? build : null;

    /// <summary>The last commit's indexed-through key.</summary>
    public string? CommittedIndexedThrough => Volatile.Read(ref _committedIndexedThrough);

    /// <summary>See <see cref="DocumentIndex.ResumeEtag"/>: the last commit's build snapshot etag, else its etag.</summary>
    public long ResumeEtag
    {
        get
        {
            var build = Volatile.Read(ref _committedBuildSnapshotEtag);
            return build != NoBuild ? build : Volatile.Read(ref _committedEtag);
        }
    }

    /// <summary>The build snapshot etag the next commit records (null: no build in progress or interrupted).</summary>
    public long? BuildSnapshotEtag => _buildSnapshotEtag;

    /// <summary>The indexed-through key the next commit records.</summary>
    public string? BuildIndexedThrough => _buildIndexedThrough;

    /// <summary>The documents through <see cref="BuildIndexedThrough"/> the next commit records.</summary>
    public long? BuildIndexedCount => _buildIndexedCount;

    /// <summary>
    /// The engine failed while writing (a flush, a commit, a refresh) since the last commit or
    /// rollback: it may have dropped documents the applied etag or the build's key already count, so
    /// nothing may be committed until a rollback to the last commit. Read from any thread.
    /// </summary>
    public bool EngineFailed => Volatile.Read(ref _engineFailed) != 0;

    /// <summary>Records that the engine failed (any writing thread).</summary>
    public void NoteEngineFailed() => Volatile.Write(ref _engineFailed, 1);

    /// <summary>The checkpoint a commit now would record, stamped with <paramref name="definitionHash"/>.</summary>
    public IndexCheckpoint Current(string definitionHash) =>
        _buildSnapshotEtag is null || _buildIndexedThrough is null
            ? new(AppliedEtag, definitionHash, _buildSnapshotEtag)
            : new(AppliedEtag, definitionHash, _buildSnapshotEtag, _buildIndexedThrough, _buildIndexedCount);

    /// <summary>Sets what the next commit records; returns what it replaced, for <see cref="Restore"/> if the commit fails.</summary>
    public Pending Set(long etag, long? buildSnapshotEtag, string? indexedThrough, long? indexedCount)
    {
        var before = new Pending(AppliedEtag, _buildSnapshotEtag, _buildIndexedThrough, _buildIndexedCount);
        Restore(new Pending(etag, buildSnapshotEtag, indexedThrough, indexedCount));
        return before;
    }

    /// <summary>Puts back what <see cref="Set"/> replaced.</summary>
    public void Restore(Pending pending)
    {
        AppliedEtag = pending.Etag;
        (_buildSnapshotEtag, _buildIndexedThrough, _buildIndexedCount) = (pending.BuildSnapshotEtag, pending.IndexedThrough, pending.IndexedCount);
    }

    /// <summary>A stopped build's key and count, for the next commit to keep.</summary>
    public void KeepIndexedThrough(string? indexedThrough, long? indexedCount) =>
        (_buildIndexedThrough, _buildIndexedCount) = (indexedThrough, indexedCount);

    /// <summary>A commit of <paramref name="checkpoint"/> succeeded.</summary>
    public void Committed(IndexCheckpoint checkpoint)
    {
        // The build snapshot first: when a build's last commit clears it, a reader in between sees
        // the etag from before the build (lower), never one the commit does not hold.
        Volatile.Write(ref _committedBuildSnapshotEtag, checkpoint.BuildSnapshotEtag ?? NoBuild);
        Volatile.Write(ref _committedIndexedThrough, checkpoint.BuildIndexedThrough);
        Volatile.Write(ref _committedEtag, checkpoint.Etag);
        Interlocked.Exchange(ref _uncommittedBytes, 0);
        Volatile.Write(ref _lastCommitTimestamp, Stopwatch.GetTimestamp());
    }

    /// <summary>The engine went back to its last commit, <paramref name="checkpoint"/> (null: never committed): its state is the index's.</summary>
    public void RolledBackTo(IndexCheckpoint? checkpoint)
    {
        var etag = checkpoint?.Etag ?? 0;
        _buildSnapshotEtag = checkpoint?.BuildSnapshotEtag;
        _buildIndexedThrough = checkpoint?.BuildIndexedThrough;
        _buildIndexedCount = checkpoint?.BuildIndexedCount;
        Volatile.Write(ref _committedBuildSnapshotEtag, checkpoint?.BuildSnapshotEtag ?? NoBuild);
        Volatile.Write(ref _committedIndexedThrough, checkpoint?.BuildIndexedThrough);
        Volatile.Write(ref _appliedEtag, etag);
        Volatile.Write(ref _committedEtag, etag);
        Interlocked.Exchange(ref _uncommittedBytes, 0);
        Volatile.Write(ref _engineFailed, 0);
    }

    /// <summary>Counts bytes written since the last commit (any writing thread).</summary>
    public void AddUncommitted(long bytes) => Interlocked.Add(ref _uncommittedBytes, bytes);

    /// <summary>A commit is due by bytes or by time, and only when something applied is uncommitted.</summary>
    public bool CommitDue(IndexOptions options) =>
        AppliedEtag != CommittedEtag &&
        (Interlocked.Read(ref _uncommittedBytes) >= options.CommitEveryBytes ||
         Stopwatch.GetElapsedTime(Volatile.Read(ref _lastCommitTimestamp)) >= options.CommitInterval);

    /// <summary>What the next commit records, as <see cref="Set"/> replaced it.</summary>
    public readonly record struct Pending(long Etag, long? BuildSnapshotEtag, string? IndexedThrough, long? IndexedCount);
}
