using System.Diagnostics;

using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

// Side-by-side rebuild: bulk (a batch source over a snapshot, from the BulkSourceFactory the manager
// was given -> replacement), catch-up (change feed after the snapshot), swap (last changes, commit,
// catalog switch, drain and delete the old).
//
// Crash safety comes from ordering against the catalog, the one source of truth for which
// generation serves: the intent (generation, definition, phase) is persisted before the
// replacement's directory is created; every phase change is persisted; the replacement is
// committed before the catalog switches; the catalog switch is one atomic file replace; the old
// generation is deleted only after it. On open, a persisted intent resumes (a bulk phase after the
// key its replacement last committed, see RebuildPhases.BulkAsync; the later phases from the
// replacement's committed checkpoint) and generation directories the catalog does not name are
// deleted.
//
// Failure rule: the catalog switch is the commit point. Before it, a failure abandons the
// replacement (Abandon) and the old generation serves on. After it, nothing may touch the serving
// generation: the rest of the swap (.Swap.cs) records its failures on the run, which ends Done.
// Whatever happens, a run ends in a final phase, so a failure never blocks the next rebuild.
internal sealed partial class IndexManager
{
    /// <summary>
    /// Starts a side-by-side rebuild of <paramref name="name"/> with its current definition (or
    /// <paramref name="definition"/>, which must have the same name); the current generation keeps
    /// serving queries and following writes until the swap.
    /// </summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    /// <exception cref="RebuildConflictException">A rebuild of the index is already running, it has no readable definition and none is given, or it is being deleted.</exception>
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
            ThrowIfDeletingLocked(name);
            if (managed.Rebuild is { IsRunning: true } running)
            {
                throw RebuildConflictException.AlreadyRunning(name, running.Progress());
            }

            var rebuildWith = definition ?? managed.Definition ?? throw RebuildConflictException.NoDefinition(name);
            return StartRebuildLocked(managed, rebuildWith, managed.OpenFailure is null ? "requested" : "requested; replaces a generation that could not be opened").Progress();
        }
    }

    /// <summary>The rebuild in progress, or the last one of this process (null if none ran since the manager opened).</summary>
    public RebuildProgress? GetRebuild(string name) => Find(name).Rebuild?.Progress();

    /// <summary>
    /// Cancels the running (or queued) rebuild and waits for it to stop: the old generation keeps serving and the
    /// replacement's directory is removed. A rebuild already past its catalog switch finishes instead;
    /// a queued one ends Cancelled without having read anything.
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
        await run.Completion.WaitAsync(cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
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

        await run.Completion.WaitAsync(cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        return run.Progress();
    }

    private RebuildRun StartRebuildLocked(ManagedIndex managed, IndexDefinition definition, string reason)
    {
        // Past every generation this index has used: the serving one, the last rebuild's, and a
        // persisted intent's (one left behind when abandoning it could not update the catalog).
        var superseded = _catalog.State.Indexes.GetValueOrDefault(managed.Name)?.Rebuild;
        var generation = Math.Max(Math.Max(managed.Generation, managed.LastRebuild?.Generation ?? 0), superseded?.Generation ?? 0) + 1;
        var intent = new RebuildIntent(generation, definition.ToJson(), DateTimeOffset.UtcNow, RebuildPhase.Bulk, reason);
        // Intent first: a crash from here on leaves a catalog that names the replacement's directory.
        UpdateCatalog(managed.Name, entry => entry! with { Rebuild = intent });
        if (superseded is not null && superseded.Generation != managed.Generation)
        {
            // No longer named by the catalog; the next open would delete it too.
            DeleteQuietly(_catalog.GenerationDirectory(managed.Name, superseded.Generation));
        }

        return ResumeRebuildLocked(managed, intent, reason);
    }

    private RebuildRun ResumeRebuildLocked(ManagedIndex managed, RebuildIntent intent, string reason)
    {
        var inPlace = intent.Generation == managed.Generation && managed.Active is not null;
        var definition = IndexDefinition.Parse(intent.DefinitionJson);
        var phase = intent.Phase;
        DocumentIndex target;
        if (inPlace)
        {
            target = managed.Active!.Index;
        }
        else
        {
            var directory = _catalog.GenerationDirectory(managed.Name, intent.Generation);
            target = DocumentIndex.Open(directory, definition, _options.Index);
            if (phase != RebuildPhase.Bulk && AheadOfStore(target) is not null)
            {
                // The store lost changes the replacement had applied: what it holds is not the
                // store's any more. Start it over from a snapshot.
                target.Dispose();
                DocumentIndex.DeleteDirectory(directory);
                target = DocumentIndex.Open(directory, definition, _options.Index);
                phase = RebuildPhase.Bulk;
                UpdateCatalog(managed.Name, entry => entry! with { Rebuild = intent with { Phase = phase } });
            }
        }

        // Last, once nothing here can throw any more: a ticket taken is always released by the run.
        var slot = _slots.Enter();
        var run = new RebuildRun(
            _store, managed.Name, intent.Generation, definition, target, inPlace, phase, reason, slot, _closing.Token, _observer is null ? null : _observer.PhaseEntered);
        managed.Rebuild = run;
        _observer?.PhaseEntered(managed.Name, run.Phase);
        run.Completion = Task.Run(() => RunRebuildAsync(managed, run));
        return run;
    }

    // Slots (IndexOptions.MaxConcurrentRebuilds). A run holds one from the moment it is admitted
    // through Bulk, CatchUp and Swapping up to the catalog switch (the swap's last catch-up, commit
    // and align index like the catch-up does); Switch releases it at the commit point, since what is
    // left (draining the old generation's queries, up to DrainTimeout, and deleting it) reads
    // nothing and must not hold the next rebuild back. A run that has to wait is in Queued meanwhile:
    // its replacement is open (empty, or as a crash left it) but nothing reads the store for it. The
    // slot is released on every way out: done (at the switch), failed, cancelled (a delete cancels
    // too), or stopped by the manager's close (the finally below); a run still queued leaves the queue.
    private async Task RunRebuildAsync(ManagedIndex managed, RebuildRun run)
    {
        var token = run.Cancellation.Token;
        try
        {
            Hook(run.Name, RebuildPoint.IntentPersisted);
            if (run.Phase == RebuildPhase.Queued)
            {
                await run.Slot.Admitted.WaitAsync(token).ConfigureAwait(false);
                // Admitted as the close (or a cancel) began: stop before any work.
                token.ThrowIfCancellationRequested();
                run.EnterPhase(run.StartPhase);
            }

            if (run.Phase == RebuildPhase.Bulk)
            {
                await _phases.BulkAsync(run, token).ConfigureAwait(false);
                Hook(run.Name, RebuildPoint.BulkCommitted);
                Persist(run, RebuildPhase.CatchUp);
                Hook(run.Name, RebuildPoint.CatchUpPersisted);
            }

            if (run.Phase == RebuildPhase.CatchUp)
            {
                _phases.CatchUp(run, token);
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
        catch (Exception e) when (e is not OutOfMemoryException && !run.PastSwitch)
        {
            Abandon(managed, run, RebuildPhase.Failed, Describe(e));
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // Past the commit point the replacement serves: never undo that. (The swap's own steps
            // after the switch catch their failures; this is the last line.)
            run.AddNote($"after the catalog switch: {Describe(e)}");
            run.EnterPhase(RebuildPhase.Done);
        }
        finally
        {
            run.Slot.Release();
        }
    }

    private void Persist(RebuildRun run, RebuildPhase phase)
    {
        lock (_lock)
        {
            UpdateCatalog(run.Name, entry => entry! with { Rebuild = entry.Rebuild! with { Phase = phase } });
        }

        run.EnterPhase(phase);
    }

    // Cancel or failure, before the catalog switch: the old generation serves on; the replacement
    // is closed and deleted, and the catalog forgets it (catalog first: a crash before the delete
    // leaves an unreferenced directory, which the next open deletes). Every step may fail in turn
    // (a full disk); none of those failures stops the run from ending, in memory, as Failed or
    // Cancelled, so the next rebuild is never refused because of this one.
    private void Abandon(ManagedIndex managed, RebuildRun run, RebuildPhase phase, string? error)
    {
        var summary = new RebuildSummary(run.Generation, phase, run.StartedAt, DateTimeOffset.UtcNow, error);
        if (run.InPlace)
        {
            // A first build that failed: the index stays defined (serving what it has, marked
            // interrupted) and keeps its intent, so that a restart or an explicit rebuild retries it.
            // Only a delete cancels one (CancelRebuildAsync refuses): the index goes next.
            lock (_lock)
            {
                managed.LastRebuild = summary;
            }

            if (phase == RebuildPhase.Cancelled)
            {
                run.EnterPhase(RebuildPhase.Cancelled);
            }
            else
            {
                run.Fail(error ?? "failed");
            }

            return;
        }

        string? problem = null;
        try
        {
            lock (_lock)
            {
                UpdateCatalog(managed.Name, entry => entry! with { Rebuild = null, LastRebuild = summary });
            }
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            problem = $"the catalog could not be updated to forget generation {run.Generation} ({Describe(e)}): the next start resumes that rebuild unless a new rebuild replaces it first; free space, then start a new rebuild";
        }

        bool named;
        lock (_lock)
        {
            named = _catalog.State.Indexes.GetValueOrDefault(managed.Name)?.ActiveGeneration == run.Generation;
        }

        try
        {
            // Never delete what the catalog names as serving, whatever went wrong on the way here.
            CloseReplacement(run, delete: !named);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            problem = Join(problem, $"generation {run.Generation} could not be removed ({Describe(e)}); the next start deletes its directory");
        }

        lock (_lock)
        {
            // In memory even when the catalog write failed: the next rebuild's generation goes past this one.
            managed.LastRebuild = summary with { Error = phase == RebuildPhase.Failed ? Join(error, problem) : error, Note = phase == RebuildPhase.Failed ? null : problem };
        }

        if (phase == RebuildPhase.Failed)
        {
            run.Fail(Join(error, problem)!);
        }
        else
        {
            if (problem is not null)
            {
                run.AddNote(problem);
            }

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

    // Best effort: what is left is deleted at the next open.
    private static void DeleteQuietly(string directory)
    {
        try
        {
            DocumentIndex.DeleteDirectory(directory);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // Unreferenced by the catalog: the next open deletes it.
        }
    }

    private static string Describe(Exception e) => $"{e.GetType().Name}: {e.Message}";

    private static string? Join(string? first, string? second) =>
        first is null ? second : second is null ? first : $"{first}; {second}";
}
