using Indexing.Storage;

namespace Indexing.Indexer;

// Incremental indexing from the store's change feed.
//
// A step (under _writeGate) reads up to ChangeBatchSize change entries after the applied etag,
// reads the bodies of the live ones with one GetMany, and applies them in etag order: a put
// replaces the document (UpdateDocument by id), a delete removes it, a put whose document is
// gone by the time it is read removes it too. Entries of other collections only advance the
// etag. The applied etag moves only when a whole step succeeded, so a failed step is replayed
// from its start (replaying is harmless: every operation is by id and idempotent).
//
// CatchUp runs steps on the caller's thread (the side-by-side rebuild uses it with an etag
// bound, while following is paused); StartFollowing runs them in a background loop (FollowLoop.cs)
// that polls every FollowPollInterval when there is nothing new. PauseFollowing returns once the running
// step has ended, and no step starts until ResumeFollowing.
internal sealed partial class DocumentIndex
{
    private readonly FollowLoop _followLoop = new();
    private WriteContext? _followContext;
    private volatile bool _paused;

    /// <summary>
    /// Applies the store's changes after the index's applied etag, up to <paramref name="upToEtag"/>
    /// (null: everything present now), then makes them visible to queries. Commits when a commit is due.
    /// </summary>
    /// <exception cref="InvalidOperationException">The index is stale, building, in error, or closed.</exception>
    /// <exception cref="IndexWriteException">The engine or the store failed; counted towards the Error state.</exception>
    public CatchUpResult CatchUp(DocumentStore store, long? upToEtag = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(store);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        ThrowIfStale("catch up");
        if (upToEtag is < 0)
        {
            throw new ArgumentOutOfRangeException(nameof(upToEtag), upToEtag, $"upToEtag is {upToEtag}; it must be at least 0 (or null for everything present).");
        }

        var state = State;
        if (state is IndexState.Building or IndexState.Error or IndexState.Closed)
        {
            throw CannotWhile("catch up", state);
        }

        var from = _checkpoints.AppliedEtag;
        long applied = 0;
        while (true)
        {
            cancellationToken.ThrowIfCancellationRequested();
            int step;
            lock (_writeGate)
            {
                step = StepLocked(store, upToEtag);
                CommitIfDueLocked();
            }

            applied += step;
            if (step == 0)
            {
                break;
            }
        }

        RefreshForQueries();
        var to = _checkpoints.AppliedEtag;
        return new CatchUpResult(applied, from, to, upToEtag is null ? to >= store.LastEtag : to >= upToEtag.Value || to >= store.LastEtag);
    }

    /// <summary>Starts a background loop that applies the change feed as it grows (the index must be idle and not stale).</summary>
    public void StartFollowing(DocumentStore store)
    {
        ArgumentNullException.ThrowIfNull(store);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        ThrowIfStale("follow the change feed");
        Options.StartFollowingHook?.Invoke(this);
        Transition(IndexState.Following, "start following", IndexState.Idle);
        _paused = false;
        _followLoop.Start(() => FollowStep(store), RecordSuccess, () => State == IndexState.Error, Options.FollowPollInterval);
    }

    /// <summary>
    /// Pauses following; returns once the step in progress (if any) has ended. Explicit
    /// <see cref="CatchUp"/> still works. Pauses nest (a verify and a swap may both hold one):
    /// following resumes when every pause has been matched by a <see cref="ResumeFollowing"/>.
    /// </summary>
    public void PauseFollowing()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (_states.TryPause() is { } refused)
        {
            throw CannotWhile("pause following", refused);
        }

        _paused = true;
        lock (_writeGate)
        {
            // The loop checks _paused under this gate before each step: once we hold it, the
            // running step (if any) is over and no other will start.
        }
    }

    /// <summary>Ends one <see cref="PauseFollowing"/>; following resumes when it was the last one held.</summary>
    public void ResumeFollowing()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (_states.TryResume(out var resumed) is { } refused)
        {
            throw CannotWhile("resume following", refused);
        }

        if (resumed)
        {
            _paused = false;
        }
    }

    /// <summary>Stops following (the index becomes idle; what was applied stays, committed at the next commit).</summary>
    public void StopFollowing()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        StopFollowLoop();
        SetState(IndexState.Idle);
    }

    private void StopFollowLoop() => _followLoop.Stop();

    // One step of the follow loop: none while paused (PauseFollowing holds the gate to wait for it).
    private int FollowStep(DocumentStore store)
    {
        lock (_writeGate)
        {
            var applied = !_paused && State == IndexState.Following ? StepLocked(store, upToEtag: null) : 0;
            CommitIfDueLocked();
            return applied;
        }
    }

    // One step; returns the number of change entries consumed. Caller holds _writeGate.
    private int StepLocked(DocumentStore store, long? upToEtag)
    {
        var after = _checkpoints.AppliedEtag;
        if (upToEtag is { } bound && after >= bound)
        {
            return 0;
        }

        // Reading first: a store that fails here has cost the index nothing.
        List<ChangeEntry> changes;
        IReadOnlyList<StoredDocument?> bodies;
        try
        {
            changes = new List<ChangeEntry>(Math.Min(Options.ChangeBatchSize, 1024));
            foreach (var change in store.ReadChanges(after, Options.ChangeBatchSize))
            {
                if (upToEtag is { } limit && change.Etag > limit)
                {
                    break;
                }

                changes.Add(change);
            }

            if (changes.Count == 0)
            {
                return 0;
            }

            var ids = new List<string>(changes.Count);
            foreach (var change in changes)
            {
                if (!change.Deleted && InCollection(change.Id))
                {
                    ids.Add(change.Id);
                }
            }

            bodies = ids.Count == 0 ? [] : store.GetMany(ids);
            _meter.Read(ids.Count);
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw RecordIndexFailure(new IndexWriteException(Name, null, $"applying the change feed after etag {after} failed: {exception.Message}", exception));
        }

        try
        {
            var context = _followContext ??= CreateWriteContext();
            var next = 0;
            foreach (var change in changes)
            {
                if (!InCollection(change.Id))
                {
                    continue;
                }

                if (change.Deleted)
                {
                    DeleteDocument(context, change.Id, countDelete: true);
                    continue;
                }

                if (bodies[next++] is { } document)
                {
                    WriteDocument(context, document.Id, document.Etag, document.Body);
                }
                else
                {
                    // Deleted between the feed read and the body read; its delete entry follows.
                    DeleteDocument(context, change.Id, countDelete: true);
                }
            }

            _checkpoints.AppliedEtag = changes[^1].Etag;
            return changes.Count;
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception) || exception is IndexWriteException)
        {
            var failure = exception as IndexWriteException
                ?? new IndexWriteException(Name, null, $"applying the change feed after etag {after} failed: {exception.Message}", exception);
            RecordIndexFailure(failure);
            RollBackLocked(failure);
            throw failure;
        }
    }

    private void CommitIfDueLocked()
    {
        if (_checkpoints.CommitDue(Options))
        {
            CommitOrRollBackLocked();
        }
    }

    // Under the write gate, as the refresh loop's (DocumentIndex.cs says why).
    private void RefreshForQueries()
    {
        lock (_writeGate)
        {
            try
            {
                _sink.Refresh();
            }
            catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
            {
                throw RefreshFailedLocked(exception);
            }
        }
    }

    // A refresh flushes what the writer buffered, so its failure may have dropped documents too: go
    // back to the last commit (or, where no rollback runs, during a build or a close, commit nothing
    // more). Caller holds _writeGate.
    private IndexWriteException RefreshFailedLocked(Exception exception)
    {
        NoteEngineFailed();
        var failure = RecordIndexFailure(new IndexWriteException(Name, null, $"refreshing the query view failed: {exception.Message}", exception));
        RollBackLocked(failure);
        return failure;
    }
}

/// <summary>What one <see cref="DocumentIndex.CatchUp"/> applied.</summary>
/// <param name="AppliedChanges">Change-feed entries consumed (all collections; only the index's own are written).</param>
/// <param name="FromEtag">The applied etag before.</param>
/// <param name="ToEtag">The applied etag after.</param>
/// <param name="CaughtUp">The index reached the bound asked for, or the store's last etag as read at the end.</param>
internal sealed record CatchUpResult(long AppliedChanges, long FromEtag, long ToEtag, bool CaughtUp);
