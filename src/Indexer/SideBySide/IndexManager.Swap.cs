using System.Diagnostics;

using Indexing.Storage;

namespace Indexing.Indexer;

// The swap, and everything after its commit point.
//
// Before the switch: the replacement applies the changes since its catch-up and commits (so the
// generation the catalog is about to name is durable); then the old generation's following is
// paused, the replacement is brought at least as far as the old one had applied and refreshed, and
// only then does the catalog switch. Every write a query could see on the old generation is
// therefore visible on the new one from the first query it answers. A failure up to here resumes
// the old generation's following and abandons the replacement (.Rebuild.cs).
//
// The catalog switch is the commit point. After it nothing may touch the serving generation: the
// replacement starts following (retried in the background if that fails), the old generation is
// retired, closed once its last query has ended, and deleted. A failure in any of these is noted
// on the run and in LastRebuild; the rebuild still ends Done, and a directory left behind is
// deleted at the next open. A query still running on the old generation after DrainTimeout keeps
// it open: it is closed when that query ends (or at shutdown), never under it.
internal sealed partial class IndexManager
{
    private static readonly TimeSpan _followRetryFirst = TimeSpan.FromMilliseconds(200);
    private static readonly TimeSpan _followRetryMax = TimeSpan.FromSeconds(30);

    private async Task SwapAsync(ManagedIndex managed, RebuildRun run, CancellationToken token)
    {
        var step = Stopwatch.GetTimestamp();
        run.Target.CatchUp(_store, upToEtag: _store.LastEtag, token);
        step = run.SwapStep("last changes", step);
        run.Target.Commit();
        step = run.SwapStep("commit", step);
        Hook(run.Name, RebuildPoint.SwapCommitted);
        token.ThrowIfCancellationRequested();

        var old = run.InPlace ? null : managed.Active;
        var paused = old is not null && TryPauseFollowing(old.Index);
        ServingIndex? replaced;
        try
        {
            // The old generation stands still at etag A now; the store's last etag is at least A.
            run.Target.CatchUp(_store, upToEtag: _store.LastEtag, token);
            step = run.SwapStep("align", step);
            token.ThrowIfCancellationRequested();
            replaced = Switch(managed, run);
        }
        catch
        {
            if (paused)
            {
                ResumeFollowingQuietly(old!.Index);
            }

            throw;
        }

        step = run.SwapStep("catalog switch", step);
        await FinishAfterSwitchAsync(managed, run, replaced, step).ConfigureAwait(false);
    }

    // The commit point: the catalog names the replacement, new queries go to it. Returns the
    // generation it replaced (null for a first build in place, or when none could be opened).
    // A catalog renamed into place whose directory fsync failed names the replacement all the same:
    // that is past the commit point too (abandoning it now would delete what the catalog names).
    // The old generation is deleted only once the catalog is durable (CloseRetired).
    private ServingIndex? Switch(ManagedIndex managed, RebuildRun run)
    {
        var ended = new RebuildSummary(run.Generation, RebuildPhase.Done, run.StartedAt, DateTimeOffset.UtcNow, Error: null);
        lock (_lock)
        {
            try
            {
                UpdateCatalog(managed.Name, entry => new CatalogEntry(run.Definition.ToJson(), run.Generation, Rebuild: null, ended), RebuildPoint.CatalogTempWritten);
            }
            catch (FileReplacedNotDurableException e)
            {
                run.AddNote($"the catalog names generation {run.Generation}, but the switch could not be made durable yet ({Describe(e)})");
            }

            run.MarkPastSwitch();
            // Past the commit point the run indexes nothing more: the next queued rebuild may start.
            run.Slot.Release();
            managed.LastRebuild = ended;
            return run.InPlace ? null : managed.Swap(new ServingIndex(run.Target, run.Generation), run.Definition);
        }
    }

    private async Task FinishAfterSwitchAsync(ManagedIndex managed, RebuildRun run, ServingIndex? old, long step)
    {
        try
        {
            Hook(run.Name, RebuildPoint.CatalogSwitched);
            run.Target.StartFollowing(_store);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            run.AddNote($"generation {run.Generation} serves but could not start following the change feed ({Describe(e)}); retrying in the background");
            KeepTryingToFollow(managed, run);
        }

        if (old is not null)
        {
            var drained = old.RetireAsync();
            await drained.WaitAsync(_options.DrainTimeout, CancellationToken.None).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            if (drained.IsCompleted)
            {
                step = run.SwapStep("drain", step);
                CloseRetired(managed, run, old, step);
            }
            else
            {
                // Closing it now would pull the index out from under a running query.
                var running = old.RunningQueries;
                run.AddNote(
                    $"{running} {(running == 1 ? "query" : "queries")} still ran on generation {old.Generation} after {_options.DrainTimeout.TotalSeconds:0.#} s; " +
                    "it is closed and deleted when the last one ends");
                _pending.Retired([old]);

                Track(drained.ContinueWith(_ => CloseRetired(managed, run, old, Stopwatch.GetTimestamp()), CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default));
            }
        }

        RecordNotes(managed, run);
        run.EnterPhase(RebuildPhase.Done);
    }

    // Closes and deletes a retired generation once no query runs on it. Past the commit point: a
    // failure is noted, and the directory is left for the next open to delete.
    private void CloseRetired(ManagedIndex managed, RebuildRun run, ServingIndex old, long step)
    {
        _pending.Closed([old]);

        if (!old.TryClaimClose())
        {
            return;
        }

        try
        {
            old.Index.Dispose();
            step = run.SwapStep("close old", step);
            Hook(run.Name, RebuildPoint.OldDrained);
            // Only once the catalog that no longer names it is durable: a power loss could otherwise
            // bring back a catalog naming a deleted generation.
            lock (_lock)
            {
                _catalog.SyncDirectory();
            }

            DocumentIndex.DeleteDirectory(old.Index.Directory);
            run.SwapStep("delete old", step);
            Hook(run.Name, RebuildPoint.OldDeleted);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            run.AddNote($"cleaning up generation {old.Generation} failed ({Describe(e)}); it no longer serves, and its directory {MessageText.QuotePath(old.Index.Directory)} is deleted at the next start");
            if (run.Phase == RebuildPhase.Done)
            {
                // The run already ended (a deferred close): its summary was recorded without this.
                RecordNotes(managed, run);
            }
        }
    }

    // Shutdown: closes a generation (drained or not, the process is stopping); idempotent.
    private static void CloseGeneration(ServingIndex generation)
    {
        if (generation.TryClaimClose())
        {
            generation.Index.Dispose();
        }
    }

    // The new generation serves; it must also follow. StartFollowing fails only on a state the index
    // is in, so try again with backoff until it follows, is replaced, is in Error (which a retry
    // cannot fix: the summary shows it), or the manager closes.
    private void KeepTryingToFollow(ManagedIndex managed, RebuildRun run)
    {
        var closing = _closing.Token;
        Track(Task.Run(async () =>
        {
            var delay = _followRetryFirst;
            for (var attempt = 2; ; attempt++)
            {
                await Task.Delay(delay, closing).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                var index = run.Target;
                if (closing.IsCancellationRequested || !ReferenceEquals(managed.Active?.Index, index) || index.State is IndexState.Following)
                {
                    return;
                }

                if (index.State is IndexState.Error or IndexState.Closed)
                {
                    run.AddNote($"generation {run.Generation} is {index.State} and does not follow the change feed; see its status (last error) and rebuild it");
                    RecordNotes(managed, run);
                    return;
                }

                try
                {
                    index.StartFollowing(_store);
                    run.AddNote($"following started on attempt {attempt}");
                    RecordNotes(managed, run);
                    return;
                }
                catch (Exception e) when (e is not OutOfMemoryException)
                {
                    delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, _followRetryMax.Ticks));
                }
            }
        }));
    }

    // Past the switch, the run's notes go into LastRebuild, in memory and (best effort: the switch
    // itself is already durable) in the catalog.
    private void RecordNotes(ManagedIndex managed, RebuildRun run)
    {
        if (run.Notes() is not { } notes)
        {
            return;
        }

        lock (_lock)
        {
            if (managed.LastRebuild is not { } last || last.Generation != run.Generation)
            {
                return;
            }

            managed.LastRebuild = last with { Note = notes };
            try
            {
                if (_catalog.State.Indexes.GetValueOrDefault(managed.Name)?.LastRebuild?.Generation == run.Generation)
                {
                    UpdateCatalog(managed.Name, entry => entry! with { LastRebuild = entry.LastRebuild! with { Note = notes } });
                }
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // Only the note is lost from the catalog; the run and the summary in memory have it.
            }
        }
    }

    private static bool TryPauseFollowing(DocumentIndex index)
    {
        if (index.State is not (IndexState.Following or IndexState.Paused))
        {
            return false;
        }

        try
        {
            index.PauseFollowing();
            return true;
        }
        catch (InvalidOperationException)
        {
            return false; // it stopped following meanwhile (Error): nothing to hold
        }
    }

    private static void ResumeFollowingQuietly(DocumentIndex index)
    {
        try
        {
            index.ResumeFollowing();
        }
        catch (InvalidOperationException)
        {
            // In Error meanwhile: its status says so.
        }
    }
}
