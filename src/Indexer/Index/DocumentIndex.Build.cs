using System.Diagnostics;

using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

// Bulk build: every document of a snapshot, from a batch source, into an empty index.
//
// The calling task takes batches ("whatever is ready"), numbers them and hands them through a
// bounded channel to IndexingThreads workers (BuildPipeline.cs), each adding with its own sink
// writer into the one engine (the Lucene engine's IndexWriter gives each thread its own in-memory
// segment, DocumentsWriterPerThread). Stall is the workers' time waiting on the channel: time the
// indexer had nothing to do.
//
// Checkpoints: a commit at the start records the snapshot etag S as "build in progress"; then a
// separate task (BulkCommitLoop.cs) commits at the cadence of BulkCommitCadence.cs (a share of the build's estimated
// duration, at most BulkCommitInterval), concurrently with the workers' adds (the engine
// allows it; neither the feeder nor the workers wait for it), recording S and the "indexed through"
// key as it stood when the commit began (IndexedThroughKey.cs): every document up to the key is in
// that commit. The index's etag stays the pre-build value until the last commit, which records S
// as the index's etag, from which following continues. A crash leaves an index that says it is
// incomplete, with the key to resume after.
internal sealed partial class DocumentIndex
{
    /// <summary>
    /// Indexes every document <paramref name="source"/> hands out (those outside the definition's
    /// collection are skipped), then commits with the source's snapshot etag as the checkpoint. The
    /// index must be new (or hold an interrupted build, which is discarded first). The source hands
    /// out each id at most once (a snapshot does): documents are added without looking for the id.
    /// </summary>
    /// <returns>What the build did and where its time went.</returns>
    /// <exception cref="InvalidOperationException">The index is not new, is stale, or is busy (following, building, in error).</exception>
    /// <exception cref="IndexWriteException">The engine failed; the index is in <see cref="IndexState.Error"/>.</exception>
    /// <exception cref="PrefetchReadException">The source failed to read; the index keeps the interrupted build until rebuilt.</exception>
    public Task<IndexMetrics> BuildAsync(IBatchSource source, CancellationToken cancellationToken = default) =>
        BuildAsync(source, resume: false, bulkCommitted: null, cancellationToken);

    /// <summary>
    /// Resumes the interrupted build the index holds (<see cref="IndexStatus.BuildIndexedThrough"/> is
    /// set) without discarding it: indexes what <paramref name="source"/> hands out, replacing by id
    /// (documents after the key may be in the commit already), then commits with the interrupted
    /// build's snapshot etag S as the checkpoint, so the change feed is applied from S. The source
    /// must read the ids after the key (its <see cref="IBatchSource.HandedOutThrough"/> is the key
    /// before the first take) in a snapshot at or after S. Why that loses and duplicates nothing:
    /// <c>RebuildPhases.cs</c>.
    /// </summary>
    /// <exception cref="InvalidOperationException">The index holds no interrupted build with a key, is stale, or is busy.</exception>
    /// <exception cref="ArgumentException">The source does not start after the key, or reads a snapshot older than S.</exception>
    /// <exception cref="IndexWriteException">The engine failed; the index is in <see cref="IndexState.Error"/>.</exception>
    public Task<IndexMetrics> ResumeBuildAsync(IBatchSource source, CancellationToken cancellationToken = default) =>
        BuildAsync(source, resume: true, bulkCommitted: null, cancellationToken);

    // The manager's entry: bulkCommitted is told each bulk commit's key, on the commit task (a test hook point).
    internal async Task<IndexMetrics> BuildAsync(IBatchSource source, bool resume, Action<string?>? bulkCommitted, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(source);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        ThrowIfStale("build");
        Transition(IndexState.Building, "start a build", IndexState.Idle);
        try
        {
            var build = BuildCoreAsync(source, resume, bulkCommitted, cancellationToken);
            _activeBuild = build;
            return await build.ConfigureAwait(false);
        }
        finally
        {
            EndBulkLoading();
            _activeBuild = null;
            SetState(IndexState.Idle);
        }
    }

    private async Task<IndexMetrics> BuildCoreAsync(IBatchSource source, bool resume, Action<string?>? bulkCommitted, CancellationToken cancellationToken)
    {
        var before = _meter.Snapshot();
        var started = Stopwatch.GetTimestamp();
        try
        {
            var (snapshotEtag, resumeAfter, heldThroughStart) = resume ? CheckResume(source) : StartFresh(source);
            await BuildFromAsync(source, snapshotEtag, resumeAfter, heldThroughStart, resume, bulkCommitted, started, before.Bytes, cancellationToken).ConfigureAwait(false);
            RefreshForQueries();
        }
        catch (IndexWriteException failure) when (_checkpoints.EngineFailed)
        {
            lock (_writeGate)
            {
                BuildFailedLocked(failure);
            }

            throw;
        }

        RecordSuccess();
        return _meter.Since(before, Stopwatch.GetElapsedTime(started));
    }

    // The build proper, after its first commit (or the resumed one's check): heldThroughStart is
    // what the index held at or below resumeAfter when it began (0 for a fresh build), the base of
    // the counts the bulk commits record.
    private async Task BuildFromAsync(
        IBatchSource source, long snapshotEtag, string? resumeAfter, long heldThroughStart, bool resume, Action<string?>? bulkCommitted, long started, long bytesBefore, CancellationToken cancellationToken)
    {
        var key = new IndexedThroughKey(resumeAfter);
        try
        {
            await new BuildPipeline(Options, _meter).RunAsync(
                source,
                key,
                () =>
                {
                    // On the worker's thread: its own writer.
                    var context = CreateWriteContext(addOnly: !resume);
                    return document => InCollection(document.Id) && WriteDocument(context, document.Id, document.Etag, document.Body.Span);
                },
                // A bulk commit records the count through its key: what the index held at the start,
                // plus what the batches up to the key added.
                stop => _bulkCommits.RunAsync(
                    source,
                    key,
                    resumeAfter,
                    () => _meter.Snapshot().Bytes - bytesBefore,
                    started,
                    (through, added) =>
                    {
                        lock (_writeGate)
                        {
                            CommitCheckpointLocked(_checkpoints.AppliedEtag, _checkpoints.BuildSnapshotEtag, through, heldThroughStart + added);
                        }
                    },
                    bulkCommitted,
                    stop),
                cancellationToken,
                _closing.Token).ConfigureAwait(false);
        }
        catch (IndexWriteException writeFailure)
        {
            throw RecordIndexFailure(writeFailure);
        }
        catch
        {
            // Cancelled, closing, the source failed, or a worker failed outside the engine: the
            // engine holds everything up to the key, so the commit Dispose makes may keep it.
            KeepIndexedThrough(key, heldThroughStart);
            throw;
        }

        lock (_writeGate)
        {
            CommitCheckpointLocked(snapshotEtag, buildSnapshotEtag: null, indexedThrough: null, indexedCount: null);
        }
    }

    // The engine failed during the build (a worker's write or flush, a bulk commit, the last commit):
    // what it had buffered since the last commit may be gone, and a bulk commit that ran beside a
    // worker's failed flush may record a key over documents that flush dropped (the commit waits for
    // the flush, not for its outcome). So go back to the last commit, and keep its key only if the
    // index holds as many documents up to it as the commit recorded; otherwise record the build
    // without a key (it then starts over, discarding what it wrote). Caller holds _writeGate.
    private void BuildFailedLocked(IndexWriteException failure)
    {
        if (!TryRollBackToLastCommitLocked(failure, out var checkpoint))
        {
            return;
        }

        string? shortfall;
        try
        {
            shortfall = KeyShortfallLocked(out _);
        }
        catch (IndexReadException counting)
        {
            shortfall = $"counting its documents failed: {counting.Message}";
        }

        if (shortfall is null)
        {
            _failures.LastError = $"{failure.Message}; the build went back to its last commit" +
                (_checkpoints.BuildIndexedThrough is { } key ? $", which holds every document through {MessageText.Quote(key)}" : string.Empty);
            return;
        }

        try
        {
            CommitCheckpointLocked(checkpoint?.Etag ?? 0, _checkpoints.BuildSnapshotEtag, indexedThrough: null, indexedCount: null);
            _failures.LastError = $"{failure.Message}; the build went back to its last commit, whose key it cannot keep ({shortfall}): a new build starts over";
        }
        catch (IndexWriteException)
        {
            // Recorded by the commit; the engine is marked failed, so nothing else is committed and
            // a resume checks the key again (CheckResume).
        }
    }

    // Why the last commit's key cannot be trusted: it recorded more documents at or below the key
    // than the index holds there (a failed flush dropped some); null when it holds them all, or when
    // it recorded no count. Reads the current query view: the caller has just opened it at the
    // commit. heldThroughKey: what the index holds at or below the key (0 without a key). Caller
    // holds _writeGate.
    private string? KeyShortfallLocked(out long heldThroughKey)
    {
        if (_checkpoints.BuildIndexedThrough is not { } key)
        {
            heldThroughKey = 0;
            return null;
        }

        heldThroughKey = CountDocumentsThrough(key);
        return _checkpoints.BuildIndexedCount is not { } recorded || heldThroughKey >= recorded
            ? null
            : $"it recorded {recorded:N0} documents through {MessageText.Quote(key)}, and holds {heldThroughKey:N0}";
    }

    /// <summary>Documents the index holds (as of its last refresh) with an id at or below <paramref name="id"/>: what a resumed build skips.</summary>
    /// <exception cref="IndexReadException">The engine failed to count.</exception>
    internal long CountDocumentsThrough(string id)
    {
        try
        {
            return _searcher.CountIdsThrough(id);
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(Name, $"counting the documents through {MessageText.Quote(id)} failed: {exception.Message}", exception);
        }
    }

    // A fresh build: into an empty index, or one holding an interrupted build, which is discarded.
    // Commits the marker (the snapshot etag S, no key yet) before the first document.
    private (long SnapshotEtag, string? ResumeAfter, long HeldThroughStart) StartFresh(IBatchSource source)
    {
        var snapshotEtag = source.SnapshotEtag;
        lock (_writeGate)
        {
            if (_checkpoints.BuildSnapshotEtag is null && (_checkpoints.AppliedEtag != 0 || _searcher.DocumentCount != 0))
            {
                throw new InvalidOperationException(
                    $"index {MessageText.Quote(Name)} already holds documents up to etag {_checkpoints.AppliedEtag}; " +
                    "a build goes into a new index: open one in a new directory (side-by-side rebuild), or delete this one first.");
            }

            try
            {
                if (_checkpoints.BuildSnapshotEtag is not null)
                {
                    // An interrupted build not resumed: what it wrote is a partial set; start over.
                    _sink.DeleteAll();
                }
            }
            catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
            {
                NoteEngineFailed();
                throw RecordIndexFailure(new IndexWriteException(Name, null, $"discarding an interrupted build failed: {exception.Message}", exception));
            }

            CommitCheckpointLocked(_checkpoints.AppliedEtag, snapshotEtag, indexedThrough: null, indexedCount: null);
            StartBulkLoading();
        }

        return (snapshotEtag, null, 0);
    }

    // A resumed build keeps the interrupted build's S and key: its last commit already records both
    // (no commit needed to start), its bulk commits go on recording S, and its last commit sets the
    // index's etag to S, not to the source's newer snapshot, so the catch-up starts from S. A key
    // whose commit holds fewer documents than it recorded is refused (KeyShortfallLocked).
    private (long SnapshotEtag, string? ResumeAfter, long HeldThroughStart) CheckResume(IBatchSource source)
    {
        lock (_writeGate)
        {
            if (_checkpoints.BuildSnapshotEtag is not { } snapshotEtag || _checkpoints.BuildIndexedThrough is not { } key)
            {
                throw new InvalidOperationException(
                    $"index {MessageText.Quote(Name)} holds no interrupted build with an indexed-through key to resume " +
                    (_checkpoints.BuildSnapshotEtag is null ? "(its last commit is not a build's)" : "(its build committed no complete prefix yet)") +
                    "; start a build with BuildAsync instead.");
            }

            if (source.HandedOutThrough != key)
            {
                throw new ArgumentException(
                    $"the source for resuming index {MessageText.Quote(Name)} starts after {MessageText.Quote(source.HandedOutThrough ?? "(the beginning)")}, " +
                    $"but the interrupted build is indexed through {MessageText.Quote(key)}; start the source after that id (Prefetch.Start's startAfterId).",
                    nameof(source));
            }

            if (source.SnapshotEtag < snapshotEtag)
            {
                throw new ArgumentException(
                    $"the source for resuming index {MessageText.Quote(Name)} reads a snapshot at etag {source.SnapshotEtag}, older than the interrupted build's " +
                    $"snapshot etag {snapshotEtag}; take the snapshot from the store the build read (a newer one), or start the build over.",
                    nameof(source));
            }

            if (KeyShortfallLocked(out var held) is { } shortfall)
            {
                throw new InvalidOperationException(
                    $"index {MessageText.Quote(Name)} cannot resume its interrupted build: its last commit lost documents ({shortfall}); start a build with BuildAsync instead.");
            }

            StartBulkLoading();
            return (snapshotEtag, key, held);
        }
    }

    /// <summary>
    /// Why the interrupted build's key cannot be resumed after (its commit holds fewer documents up
    /// to the key than it recorded: a failed write dropped some), or null when it can, or there is none.
    /// </summary>
    /// <exception cref="IndexReadException">The engine failed to count.</exception>
    internal string? InterruptedBuildKeyProblem()
    {
        lock (_writeGate)
        {
            return KeyShortfallLocked(out _);
        }
    }

    // The engine's bulk settings (a larger RAM buffer, no compound files) for the build; caller holds _writeGate.
    private void StartBulkLoading()
    {
        try
        {
            _sink.SetBulkLoading(true);
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw RecordIndexFailure(new IndexWriteException(Name, null, $"switching to bulk loading failed: {exception.Message}", exception));
        }
    }

    // Back to the following settings once the build ended, however it ended. An engine that is
    // closed (the index is being disposed, or the writer closed itself) has nothing to switch back: a
    // reopened one starts with the following settings.
    private void EndBulkLoading()
    {
        if (Volatile.Read(ref _disposed) != 0 || _sink.WriterClosed)
        {
            return;
        }

        try
        {
            _sink.SetBulkLoading(false);
        }
        catch (ObjectDisposedException) when (Volatile.Read(ref _disposed) != 0 || _sink.WriterClosed)
        {
            // Closed meanwhile: as above.
        }
    }

    // A build stopped (cancelled, closing, or its source failed) with the engine intact: the key it
    // reached is still true, so the commit Dispose makes keeps it and a resume loses nothing more.
    private void KeepIndexedThrough(IndexedThroughKey key, long heldThroughStart)
    {
        var (through, added) = key.Prefix();
        lock (_writeGate)
        {
            _checkpoints.KeepIndexedThrough(through, through is null ? null : heldThroughStart + added);
        }
    }
}
