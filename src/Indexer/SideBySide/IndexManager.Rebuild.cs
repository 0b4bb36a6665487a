using System.Diagnostics;

using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

// Side-by-side rebuild: bulk (snapshot -> adaptive prefetcher -> replacement), catch-up (change
// feed after the snapshot), swap (last changes, commit, catalog switch, drain and delete the old).
//
// Crash safety comes from ordering against the catalog, the one source of truth for which
// generation serves: the intent (generation, definition, phase) is persisted before the
// replacement's directory is created; every phase change is persisted; the replacement is
// committed before the catalog switches; the catalog switch is one atomic file replace; the old
// generation is deleted only after it. On open, a persisted intent resumes (a bulk phase starts
// over, the later phases continue from the replacement's committed checkpoint) and directories the
// catalog does not name are deleted.
public sealed partial class IndexManager
{
    /// <summary>
    /// Starts a side-by-side rebuild of <paramref name="name"/> with its current definition (or
    /// <paramref name="definition"/>, which must have the same name); the current generation keeps
    /// serving queries and following writes until the swap.
    /// </summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    /// <exception cref="RebuildConflictException">A rebuild of the index is already running.</exception>
    public RebuildProgress StartRebuild(string name, IndexDefinition? definition = null)
    {
        var managed = Find(name);
        if (definition is not null && definition.Name != name)
        {
            throw new ArgumentException(
                $"the definition is named {MessageText.Quote(definition.Name)}, but the rebuild is of index {MessageText.Quote(name)}; a rebuild keeps the index's name.",
                nameof(definition));
        }

        lock (_lock)
        {
            if (managed.Rebuild is { IsRunning: true } running)
            {
                throw RebuildConflictException.AlreadyRunning(name, running.Progress());
            }

            return StartRebuildLocked(managed, definition ?? managed.Definition, "requested").Progress();
        }
    }

    /// <summary>The rebuild in progress, or the last one of this process (null if none ran since the manager opened).</summary>
    public RebuildProgress? GetRebuild(string name) => Find(name).Rebuild?.Progress();

    /// <summary>
    /// Cancels the running rebuild and waits for it to stop: the old generation keeps serving and the
    /// replacement's directory is removed. A rebuild already past its catalog switch finishes instead.
    /// </summary>
    /// <exception cref="InvalidOperationException">No rebuild of the index is running.</exception>
    public async Task<RebuildProgress> CancelRebuildAsync(string name, CancellationToken cancellationToken = default)
    {
        var managed = Find(name);
        RebuildRun run;
        lock (_lock)
        {
            run = managed.Rebuild is { IsRunning: true } running
                ? running
                : throw new InvalidOperationException($"no rebuild of index {MessageText.Quote(name)} is running; there is nothing to cancel.");
        }

        if (run.InPlace)
        {
            throw new InvalidOperationException(
                $"index {MessageText.Quote(name)} is being built for the first time; there is no older generation to return to. Delete the index instead.");
        }

        run.RequestCancel();
        await run.Completion.WaitAsync(cancellationToken).ContinueWith(static _ => { }, TaskScheduler.Default).ConfigureAwait(false);
        return run.Progress();
    }

    /// <summary>Waits until the index's current rebuild has ended and returns its final progress.</summary>
    public async Task<RebuildProgress?> WaitForRebuildAsync(string name, CancellationToken cancellationToken = default)
    {
        var run = Find(name).Rebuild;
        if (run is null)
        {
            return null;
        }

        await run.Completion.WaitAsync(cancellationToken).ContinueWith(static _ => { }, TaskScheduler.Default).ConfigureAwait(false);
        return run.Progress();
    }

    private RebuildRun StartRebuildLocked(ManagedIndex managed, IndexDefinition definition, string reason)
    {
        var generation = Math.Max(managed.Active.Generation, managed.LastRebuild?.Generation ?? 0) + 1;
        var intent = new RebuildIntent(generation, definition.ToJson(), DateTimeOffset.UtcNow, RebuildPhase.Bulk, reason);
        // Intent first: a crash from here on leaves a catalog that names the replacement's directory.
        UpdateCatalog(managed.Name, entry => entry! with { Rebuild = intent });
        return ResumeRebuildLocked(managed, intent, reason);
    }

    private RebuildRun ResumeRebuildLocked(ManagedIndex managed, RebuildIntent intent, string reason)
    {
        var inPlace = intent.Generation == managed.Active.Generation;
        var definition = IndexDefinition.Parse(intent.DefinitionJson);
        var target = inPlace
            ? managed.Active.Index
            : DocumentIndex.Open(_catalog.GenerationDirectory(managed.Name, intent.Generation), definition, _options.Index);
        var run = new RebuildRun(_store, managed.Name, intent.Generation, definition, target, inPlace, intent.Phase, reason, _closing.Token);
        managed.Rebuild = run;
        run.Completion = Task.Run(() => RunRebuildAsync(managed, run));
        return run;
    }

    private async Task RunRebuildAsync(ManagedIndex managed, RebuildRun run)
    {
        var token = run.Cancellation.Token;
        try
        {
            Hook(run.Name, RebuildPoint.IntentPersisted);
            if (run.Phase == RebuildPhase.Bulk)
            {
                await BulkAsync(run, token).ConfigureAwait(false);
                Hook(run.Name, RebuildPoint.BulkCommitted);
                Persist(run, RebuildPhase.CatchUp);
                Hook(run.Name, RebuildPoint.CatchUpPersisted);
            }

            if (run.Phase == RebuildPhase.CatchUp)
            {
                CatchUp(run, token);
                Persist(run, RebuildPhase.Swapping);
                Hook(run.Name, RebuildPoint.SwapPersisted);
            }

            await SwapAsync(managed, run, token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested && !run.PastSwitch)
        {
            if (run.CancelRequested)
            {
                Abandon(managed, run, RebuildPhase.Cancelled, error: null);
            }
            else
            {
                // Shutdown: leave the intent in the catalog; the next open resumes the rebuild.
                CloseReplacement(run, delete: false);
            }
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            Abandon(managed, run, RebuildPhase.Failed, $"{e.GetType().Name}: {e.Message}");
        }
    }

    private async Task BulkAsync(RebuildRun run, CancellationToken token)
    {
        var status = run.Target.GetStatus();
        if (!status.BuildInterrupted && status.CommittedEtag > 0)
        {
            // Resumed after a crash that came after the bulk phase's final commit but before the
            // phase change was persisted: the replacement is complete up to its snapshot.
            run.SnapshotEtag = status.CommittedEtag;
            return;
        }

        // The store's Get latency is the foreground signal: the prefetcher backs off when a
        // rebuild starts to hurt live reads.
        var options = _options.Prefetch with { ForegroundLatency = _store.ForegroundReadLatency };
        var prefetch = Prefetch.Start(_store, run.Definition.Collection, PrefetchStrategy.Adaptive, options, cancellationToken: token);
        await using (prefetch.ConfigureAwait(false))
        {
            run.SnapshotEtag = prefetch.SnapshotEtag;
            run.AttachPrefetch(prefetch);
            var watched = _options.WatchBulkPrefetch?.Invoke(run.Name, prefetch);
            Hook(run.Name, RebuildPoint.BulkStarted);
            try
            {
                await run.Target.BuildAsync(new HookedBatchSource(prefetch, () => Hook(run.Name, RebuildPoint.BulkBatchTaken)), token).ConfigureAwait(false);
            }
            finally
            {
                watched?.Dispose();
                run.DetachPrefetch();
            }
        }
    }

    // Applies the change feed in rounds, each up to the store's last etag when it starts (a round
    // always ends, however fast writes arrive), until the replacement is at most SwapLagEtags
    // behind, or three rounds in a row did not shrink the lag: writes then arrive as fast as the
    // index applies them, the old generation lags just the same, and waiting would never end.
    private void CatchUp(RebuildRun run, CancellationToken token)
    {
        var previousLag = long.MaxValue;
        var roundsWithoutGain = 0;
        while (true)
        {
            token.ThrowIfCancellationRequested();
            var result = run.Target.CatchUp(_store, upToEtag: _store.LastEtag, token);
            Hook(run.Name, RebuildPoint.CatchUpStep);
            var lag = _store.LastEtag - result.ToEtag;
            if (lag <= _options.SwapLagEtags)
            {
                return;
            }

            roundsWithoutGain = lag < previousLag ? 0 : roundsWithoutGain + 1;
            if (roundsWithoutGain >= 3)
            {
                run.Note($"catch-up stopped gaining at a lag of {lag:N0} etags (writes arrive as fast as they are indexed); swapped anyway, the new generation follows on");
                return;
            }

            previousLag = lag;
        }
    }

    private async Task SwapAsync(ManagedIndex managed, RebuildRun run, CancellationToken token)
    {
        // The replacement is not following: apply what arrived since the catch-up (up to the etag
        // now, so this ends under any write rate) and commit, so the generation the catalog is
        // about to name is durable and as current as the one it replaces.
        var step = Stopwatch.GetTimestamp();
        run.Target.CatchUp(_store, upToEtag: _store.LastEtag, token);
        step = run.SwapStep("last changes", step);
        run.Target.Commit();
        step = run.SwapStep("commit", step);
        Hook(run.Name, RebuildPoint.SwapCommitted);
        token.ThrowIfCancellationRequested();

        var ended = new RebuildSummary(run.Generation, RebuildPhase.Done, run.StartedAt, DateTimeOffset.UtcNow, Error: null);
        ServingIndex? old = null;
        lock (_lock)
        {
            UpdateCatalog(managed.Name, entry => new CatalogEntry(run.Definition.ToJson(), run.Generation, Rebuild: null, ended), RebuildPoint.CatalogTempWritten);

            run.MarkPastSwitch();
            managed.LastRebuild = ended;
            if (!run.InPlace)
            {
                old = managed.Swap(new ServingIndex(run.Target, run.Generation), run.Definition);
            }
        }

        step = run.SwapStep("catalog switch", step);
        Hook(run.Name, RebuildPoint.CatalogSwitched);
        run.Target.StartFollowing(_store);
        if (old is not null)
        {
            // Queries that started on the old generation finish there; then it closes.
            var drained = old.RetireAsync();
            try
            {
                await drained.WaitAsync(_options.DrainTimeout, CancellationToken.None).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                // A query running longer than the drain timeout would pin the old generation forever.
                run.Note($"{old.RunningQueries} queries still ran on generation {old.Generation} after {_options.DrainTimeout.TotalSeconds:0} s; it was closed anyway");
            }

            step = run.SwapStep("drain", step);
            old.Index.Dispose();
            step = run.SwapStep("close old", step);
            Hook(run.Name, RebuildPoint.OldDrained);
            DocumentIndex.DeleteDirectory(old.Index.Directory);
            run.SwapStep("delete old", step);
            Hook(run.Name, RebuildPoint.OldDeleted);
        }

        run.EnterPhase(RebuildPhase.Done);
    }

    private void Persist(RebuildRun run, RebuildPhase phase)
    {
        lock (_lock)
        {
            UpdateCatalog(run.Name, entry => entry! with { Rebuild = entry.Rebuild! with { Phase = phase } });
        }

        run.EnterPhase(phase);
    }

    // Cancel or failure: the old generation serves on; the replacement is closed and deleted, and
    // the catalog forgets it (catalog first: a crash before the delete leaves an unreferenced
    // directory, which the next open deletes).
    private void Abandon(ManagedIndex managed, RebuildRun run, RebuildPhase phase, string? error)
    {
        var summary = new RebuildSummary(run.Generation, phase, run.StartedAt, DateTimeOffset.UtcNow, error);
        if (run.InPlace)
        {
            // A first build that failed: the index stays defined (serving what it has, marked
            // interrupted) and keeps its intent, so that a restart or an explicit rebuild retries it.
            lock (_lock)
            {
                managed.LastRebuild = summary;
            }

            run.Fail(error ?? "cancelled");
            return;
        }

        lock (_lock)
        {
            UpdateCatalog(managed.Name, entry => entry! with { Rebuild = null, LastRebuild = summary });
            managed.LastRebuild = summary;
        }

        CloseReplacement(run, delete: true);
        if (phase == RebuildPhase.Failed)
        {
            run.Fail(error!);
        }
        else
        {
            run.EnterPhase(phase);
        }
    }

    private static void CloseReplacement(RebuildRun run, bool delete)
    {
        if (run.InPlace)
        {
            return;
        }

        run.Target.Dispose();
        if (delete)
        {
            DocumentIndex.DeleteDirectory(run.Target.Directory);
        }
    }
}
