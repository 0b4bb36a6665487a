namespace Indexing.Indexer;

// The index's state machine and failure accounting, read as one immutable IndexStatus.
//
// The state and its moves are IndexStateMachine's; the failure counts and messages IndexFailures',
// so GetStatus never waits for a writer.
internal sealed partial class DocumentIndex
{
    private readonly IndexStateMachine _states = new();
    private readonly IndexFailures _failures = new();

    /// <summary>A reading of the index's state, checkpoint, failures and metrics; cheap, never blocks on writing.</summary>
    public IndexStatus GetStatus()
    {
        long documentCount;
        double ramBuffer;
        try
        {
            documentCount = Volatile.Read(ref _disposed) == 0 ? _searcher.DocumentCount : 0;
            ramBuffer = Volatile.Read(ref _disposed) == 0 && !_sink.WriterClosed ? _sink.RamBufferSizeMB : 0;
        }
        catch (ObjectDisposedException)
        {
            documentCount = 0;
            ramBuffer = 0;
        }

        return new IndexStatus(
            Name,
            Directory,
            State,
            IsStale,
            BuildInterrupted,
            Definition.DefinitionHash,
            _committedHash,
            _checkpoints.AppliedEtag,
            _checkpoints.CommittedEtag,
            documentCount,
            _failures.FailedDocuments,
            _failures.LastDocumentFailure,
            _failures.MismatchedValues,
            _failures.LastMismatch,
            _failures.Consecutive,
            _failures.LastError,
            _failures.Rollbacks)
        {
            Metrics = _meter.Snapshot(),
            BuildSnapshotEtag = _checkpoints.CommittedBuildSnapshotEtag,
            BuildIndexedThrough = _checkpoints.CommittedIndexedThrough,
            RamBufferSizeMB = ramBuffer,
            BulkCommitInterval = _bulkCommits.Interval,
        };
    }

    // The status of an index that could not be opened: Error, with the reason, and nothing else known.
    internal static IndexStatus FailedToOpenStatus(string name, string directory, IndexDefinition? definition, string reason) => new(
        name,
        directory,
        IndexState.Error,
        IsStale: false,
        BuildInterrupted: false,
        definition?.DefinitionHash ?? string.Empty,
        CommittedDefinitionHash: null,
        AppliedEtag: 0,
        CommittedEtag: 0,
        DocumentCount: 0,
        FailedDocuments: 0,
        LastDocumentFailure: null,
        MismatchedValues: 0,
        LastMismatch: null,
        ConsecutiveFailures: 0,
        LastError: reason,
        Rollbacks: 0);

    /// <summary>Bytes the engine's writer buffers in RAM now (at most <see cref="IndexOptions.RamBufferSizeMB"/>); cheap, 0 once disposed.</summary>
    public long RamBufferBytes => Volatile.Read(ref _disposed) == 0 ? _sink.RamBufferBytes : 0;

    /// <summary>What the index is doing now.</summary>
    public IndexState State => _states.Current;

    /// <summary>The last commit was made mid-build (a build never finished): the index is incomplete until rebuilt.</summary>
    public bool BuildInterrupted => _checkpoints.BuildSnapshotEtag is not null && State != IndexState.Building;

    // Moves from one of the allowed states to another, or throws naming the index and its state.
    private void Transition(IndexState to, string action, params IndexState[] from)
    {
        if (_states.TryMove(to, from) is { } refused)
        {
            throw CannotWhile(action, refused);
        }
    }

    // "index 'x' cannot <action> while it is <state>", with the last error and what to do when that state is Error.
    private InvalidOperationException CannotWhile(string action, IndexState state) => new(
        $"index {MessageText.Quote(Name)} cannot {action} while it is {state}" +
        (state == IndexState.Error ? $" (last error: {_failures.LastError}); reopen it after fixing the cause." : "."));

    private void SetState(IndexState to) => _states.Set(to);

    private void ThrowIfStale(string action)
    {
        if (IsStale)
        {
            throw new InvalidOperationException(
                $"index {MessageText.Quote(Name)} cannot {action}: it was built with definition hash {_committedHash[..12]}..., " +
                $"not {Definition.DefinitionHash[..12]}... of the definition in use; rebuild it into a new directory.");
        }
    }

    // A failure of the index itself: counted; after MaxConsecutiveFailures in a row the index
    // stops writing (Error) rather than retrying forever. A writer that closed itself during a
    // build is Error at once (outside a build, the rollback reopens it). Returns the exception for throwing.
    // Idempotent per exception: a failure recorded where it happened (e.g. in a commit) and seen
    // again by an outer loop is counted once.
    private IndexWriteException RecordIndexFailure(IndexWriteException failure)
    {
        if (_failures.Record(failure) is not { } failures)
        {
            return failure;
        }

        _states.FailIf(state => failures >= Options.MaxConsecutiveFailures || (_sink.WriterClosed && state == IndexState.Building));

        return failure;
    }

    private void RecordSuccess() => _failures.Succeeded();

    private void RecordDocumentFailure(IndexWriteException failure) => _failures.DocumentFailed(failure);

    private void RecordMismatches(string id, ExtractedFields fields) => _failures.Mismatched(id, fields);
}
