using System.Diagnostics;

using Indexing.Storage;

using Microsoft.Extensions.Options;

namespace Indexing.Indexer;

/// <summary>
/// One search index over one collection, in its own directory: bulk build from a batch source,
/// incremental following of the store's change feed, checkpoints, near-real-time queries.
/// </summary>
/// <remarks>
/// <para>
/// The engine-neutral indexing loop: it owns the engine and speaks to it only through
/// <see cref="IIndexSink"/> (writing) and <see cref="IIndexSearcher"/> (queries, verify); the Lucene
/// engine (<c>src/Indexer/Lucene</c>) is the one implementation. A background loop refreshes the query
/// view every <see cref="IndexOptions.RefreshInterval"/>. One writing activity at a time (a build, a
/// catch-up step, a commit) holds <c>_writeGate</c>; queries and status never wait for it.
/// </para>
/// <para>
/// Files: this one (open, commit, rollback, dispose, the refresh tick); <c>.Writing.cs</c> (one
/// document through extraction and the sink); <c>.Build.cs</c> (bulk build from an
/// <c>IBatchSource</c>); <c>.Follow.cs</c> (change feed: catch-up steps, background follow, pause);
/// <c>.Query.cs</c>; <c>.Verify.cs</c>; <c>.Status.cs</c> (status record, error state). Classes the
/// index holds, each with its own state: <see cref="IndexCheckpoints"/> (applied and committed
/// etags, the build marker), <see cref="IndexFailures"/>, <see cref="IndexStateMachine"/>,
/// <see cref="FollowLoop"/>, <see cref="RefreshLoop"/>, <see cref="BulkCommitLoop"/>, and per build
/// <see cref="BuildPipeline"/>.
/// </para>
/// </remarks>
internal sealed partial class DocumentIndex : IDisposable
{
    private readonly IIndexSink _sink;
    private readonly BulkCommitLoop _bulkCommits;
    private readonly IIndexSearcher _searcher;
    private readonly FieldExtractor _extractor;
    private readonly IndexMeter _meter = new();
    private readonly System.Threading.Lock _writeGate = new();
    private readonly CancellationTokenSource _closing = new();
    private readonly RefreshLoop _refreshLoop;
    private readonly string _committedHash;
    private readonly IndexCheckpoints _checkpoints; // changed under _writeGate
    private int _disposed;
    private Task? _activeBuild;

    private DocumentIndex(string directory, IndexDefinition definition, IndexOptions options, IIndexSink sink)
    {
        Directory = directory;
        Definition = definition;
        Options = options;
        _sink = sink;
        _searcher = sink.Searcher;
        _extractor = new FieldExtractor(definition);
        _bulkCommits = new BulkCommitLoop(options);
        _checkpoints = new IndexCheckpoints(sink.OpenedCheckpoint);
        if (sink.OpenedCheckpoint is { } checkpoint)
        {
            _committedHash = checkpoint.DefinitionHash;
        }
        else
        {
            // A new index: stamp it with the definition at once, so the directory is a valid index
            // that says what it holds even before the first document.
            _committedHash = definition.DefinitionHash;
            sink.Commit(CurrentCheckpoint());
        }

        _refreshLoop = new RefreshLoop(RefreshTick, options.RefreshInterval, _closing.Token);
    }

    /// <summary>The directory the index lives in (its own; nothing else may write there).</summary>
    public string Directory { get; }

    /// <summary>The definition in use.</summary>
    public IndexDefinition Definition { get; }

    /// <summary>The index's name (from the definition).</summary>
    public string Name => Definition.Name;

    /// <summary>The options it was opened with.</summary>
    public IndexOptions Options { get; }

    /// <summary>
    /// Where this index would read the change feed from if it were reopened now: its last commit's
    /// etag, or, for a commit made during a bulk build, the snapshot etag the build reads (the
    /// catch-up after the build starts there). The store may purge tombstones at or below it.
    /// </summary>
    internal long ResumeEtag => _checkpoints.ResumeEtag;

    /// <summary>
    /// A build of this index would start over from a new snapshot: its last commit (if any) is at etag
    /// 0 and records no interrupted build, so nothing it holds needs the change feed from any etag.
    /// </summary>
    internal bool BuildsAfresh => _checkpoints.ResumeEtag == 0 && _checkpoints.CommittedBuildSnapshotEtag is null;

    /// <summary>The last commit was made with another definition: the index must be rebuilt (it still serves queries).</summary>
    public bool IsStale => _committedHash != Definition.DefinitionHash;

    /// <summary>Opens the index in <paramref name="directory"/>, creating it (and the directory) if needed.</summary>
    /// <exception cref="IndexWriteException">The directory is locked by another writer, or the index cannot be opened.</exception>
    /// <exception cref="OptionsValidationException"><paramref name="options"/> break a rule of <see cref="IndexOptionsValidator"/>.</exception>
    public static DocumentIndex Open(string directory, IndexDefinition definition, IndexOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        ArgumentNullException.ThrowIfNull(definition);
        options = OptionProblems.ThrowIfInvalid(new IndexOptionsValidator(), options ?? new IndexOptions());
        IIndexSink sink;
        try
        {
            System.IO.Directory.CreateDirectory(directory);
            // The engine translates what only it can recognise (a directory locked by another writer).
            sink = options.OpenSink?.Invoke(directory, definition, options) ?? LuceneIndexSink.Open(directory, definition, options);
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            throw new IndexWriteException(definition.Name, null, $"cannot open its directory {MessageText.QuotePath(directory)}: {exception.Message}", exception);
        }

        try
        {
            return new DocumentIndex(directory, definition, options, sink);
        }
        catch (Exception exception)
        {
            sink.Close(keepPending: false);
            if (exception is IndexException)
            {
                throw;
            }

            throw new IndexWriteException(definition.Name, null, $"cannot open its directory {MessageText.QuotePath(directory)}: {exception.Message}", exception);
        }
    }

    /// <summary>
    /// The <see cref="ResumeEtag"/> an index in <paramref name="directory"/> would have if it were
    /// opened, read from its last commit without opening it; null when there is no index there.
    /// </summary>
    /// <exception cref="IOException">The commit could not be read.</exception>
    /// <exception cref="InvalidDataException">The commit's checkpoint is unreadable.</exception>
    internal static long? ReadResumeEtag(string directory) =>
        LuceneIndexSink.ReadLastCommit(directory) is { } checkpoint ? checkpoint.BuildSnapshotEtag ?? checkpoint.Etag : null;

    /// <summary>Deletes a closed index's directory and everything in it; nothing happens if it does not exist.</summary>
    public static void DeleteDirectory(string directory)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        if (System.IO.Directory.Exists(directory))
        {
            System.IO.Directory.Delete(directory, recursive: true);
        }
    }

    /// <summary>Commits now: what was written becomes durable with its checkpoint (etag, definition hash).</summary>
    /// <exception cref="IndexWriteException">The engine failed to commit.</exception>
    public void Commit()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_writeGate)
        {
            CommitOrRollBackLocked();
        }
    }

    /// <summary>
    /// Stops following, commits what was applied (unless the index is in error, or its engine failed
    /// since the last commit and was not rolled back: then the last commit stands) and closes the
    /// engine. Idempotent.
    /// </summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _closing.Cancel();
        StopFollowLoop();
        // A running build sees _closing and stops; its outcome belongs to its caller, and the
        // refresh loop records its own failures: neither may stop the close (nor may a wait that
        // times out, hence WaitAsync under SuppressThrowing; Dispose is synchronous, so it blocks).
        if (_activeBuild is { } build)
        {
            WaitIgnoringOutcome(build, TimeSpan.FromSeconds(30));
        }

        _refreshLoop.Wait(TimeSpan.FromSeconds(10));

        var committed = false;
        lock (_writeGate)
        {
            try
            {
                if (State != IndexState.Error && !IsStale && !_checkpoints.EngineFailed)
                {
                    CommitLocked();
                    committed = true;
                }
            }
            catch (IndexWriteException)
            {
                // Recorded in the status by CommitLocked; close without committing below.
            }
            finally
            {
                _states.Close();
                _sink.Close(keepPending: committed);

                _closing.Dispose();
            }
        }
    }

    // Test hook: behave as if the process died here. Background loops stop, nothing is committed
    // or closed (the writer keeps its files and its lock, as a dead process's would until the OS
    // released them); every later call sees a disposed index. The caller clears the write lock
    // (IndexWriter.Unlock) as the OS would, then opens a fresh index over the directory.
    internal void SimulateCrash()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _closing.Cancel();
        StopFollowLoop();
        _refreshLoop.Wait(TimeSpan.FromSeconds(10));
    }

    // Blocks until the task ends or the timeout passes, whatever the task's outcome.
    private static void WaitIgnoringOutcome(Task task, TimeSpan timeout) =>
        task.WaitAsync(timeout).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing).GetAwaiter().GetResult();

    /// <inheritdoc/>
    public override string ToString() => $"index {MessageText.Quote(Name)} at {MessageText.Quote(Directory)}";

    private IndexCheckpoint CurrentCheckpoint() => _checkpoints.Current(_committedHash);

    // The engine failed while writing (a flush, a commit, a refresh): Lucene has dropped the
    // documents that flush held, which the applied etag or the build's key may already count. Until a
    // rollback to the last commit, nothing may be committed.
    private void NoteEngineFailed() => _checkpoints.NoteEngineFailed();

    // Caller holds _writeGate. Refuses while the engine has failed since the last commit or rollback:
    // such a commit would record an etag or a key over documents the engine no longer holds.
    private void CommitLocked()
    {
        if (_checkpoints.EngineFailed)
        {
            throw RecordIndexFailure(new IndexWriteException(
                Name, null, $"not committed: the engine failed since the last commit and may have dropped documents it had buffered (last error: {_failures.LastError}); the index goes back to its last commit instead", null));
        }

        var start = Stopwatch.GetTimestamp();
        var checkpoint = CurrentCheckpoint();
        try
        {
            _sink.Commit(checkpoint);
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            NoteEngineFailed();
            throw RecordIndexFailure(new IndexWriteException(Name, null, $"commit failed: {exception.Message}", exception));
        }

        _meter.Committed(Stopwatch.GetTimestamp() - start);
        _checkpoints.Committed(checkpoint);
    }

    // Commits the checkpoint the given values make; if the commit fails, the values go back to what
    // they were, so nothing in memory claims what no commit holds. Caller holds _writeGate.
    private void CommitCheckpointLocked(long etag, long? buildSnapshotEtag, string? indexedThrough, long? indexedCount)
    {
        var before = _checkpoints.Set(etag, buildSnapshotEtag, indexedThrough, indexedCount);
        try
        {
            CommitLocked();
        }
        catch
        {
            _checkpoints.Restore(before);
            throw;
        }
    }

    // A commit outside a build: if it fails, what the writer had buffered may be gone (Lucene drops
    // a failed flush's documents), so the index goes back to its last commit. Caller holds _writeGate.
    private void CommitOrRollBackLocked()
    {
        try
        {
            CommitLocked();
        }
        catch (IndexWriteException failure)
        {
            RollBackLocked(failure);
            throw;
        }
    }

    // After a failure of the engine while following or catching up, the applied etag no longer says
    // what the index holds: a failed flush drops the documents it had buffered, however many steps
    // ago they were applied. The last commit still says it, so go back there (writer and query view
    // reopened at it) and let the change feed be applied again from its etag: every operation is by
    // id, so replaying is harmless. A build is not rolled back here: its caller discards it. If the
    // rollback fails too, the index is in Error. Caller holds _writeGate.
    private void RollBackLocked(IndexWriteException failure)
    {
        if (State is IndexState.Building or IndexState.Closed || Volatile.Read(ref _disposed) != 0)
        {
            return;
        }

        if (TryRollBackToLastCommitLocked(failure, out var checkpoint))
        {
            _failures.LastError = $"{failure.Message}; rolled back to the last commit (etag {checkpoint?.Etag ?? 0}), and the change feed is applied again from there";
        }
    }

    // Reopens the engine at its last commit and takes that commit's checkpoint (null: never
    // committed) as the index's state. False when the rollback failed too: then the index is in
    // Error, writes nothing more and must be reopened. Caller holds _writeGate.
    private bool TryRollBackToLastCommitLocked(IndexWriteException failure, out IndexCheckpoint? checkpoint)
    {
        try
        {
            checkpoint = _sink.RollbackToLastCommit();
            _checkpoints.RolledBackTo(checkpoint);
            _failures.RolledBack();
            return true;
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            _failures.LastError =
                $"{failure.Message}; rolling back to the last commit failed too ({exception.Message}): the index answers queries on what it holds, writes nothing more, and must be reopened";
            _states.FailIf(_ => true);

            checkpoint = null;
            return false;
        }
    }

    // One tick of the refresh loop; false once the engine is closed (the loop ends).
    private bool RefreshTick()
    {
        // Under the write gate: a refresh flushes what the writer buffered, and if that flush
        // fails, no commit may come between it and the rollback (it would record the applied etag
        // over the documents the flush dropped).
        lock (_writeGate)
        {
            if (State == IndexState.Building)
            {
                // An NRT reopen flushes every thread's in-memory segment: refreshing during a bulk
                // build would cut tiny segments every tick whatever the RAM buffer, and a build's
                // index serves no queries yet (the build refreshes once at its end).
                return true;
            }

            try
            {
                _sink.Refresh();
            }
            catch (ObjectDisposedException)
            {
                return false;
            }
            catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
            {
                RefreshFailedLocked(exception);
            }

            return true;
        }
    }
}
