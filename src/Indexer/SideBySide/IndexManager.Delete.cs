using Indexing.Storage;

namespace Indexing.Indexer;

// Deleting an index. The catalog is the one source of truth: once its entry is gone the index is
// gone, and whatever of it is left on disk is deleted at the next open
// (IndexCatalog.DeleteUnreferencedDirectories). So the order is:
// 1. stop what writes to the index or reads the change feed for it: a running rebuild (a first build
//    in place too) is cancelled and awaited (a cancelled replacement is removed as by any cancel),
//    then the serving generation's following is paused;
// 2. write the catalog without the entry: the commit point. Under the same lock the index leaves the
//    map, so queries answer IndexNotFoundException from here on, and its tombstone watermark hold
//    ends with it (step 4: nothing of it reads the change feed any more since step 1, and what is
//    defined later under the name reads a later snapshot);
// 3. retire the generations (the serving one, and one a swap retired that still runs queries),
//    close each once its last query ended, make the catalog durable, delete the directories.
// A failure before the commit point resumes following and the index serves on; after it, a cleanup
// failure is noted and the next open deletes what is left. The name stays reserved (defining,
// rebuilding or deleting it again is refused) until its directory is gone, so that a new
// generation 1 never lands in a directory the delete is still removing.
internal sealed partial class IndexManager
{
    private readonly HashSet<string> _deleting = new(StringComparer.Ordinal);

    /// <summary>
    /// Deletes the index: cancels its running rebuild (a first build too) and waits for it to end,
    /// removes it from the catalog (from then on it is gone, also after a crash), then closes its
    /// generations once their running queries ended (waiting up to <see cref="IndexManagerOptions.DrainTimeout"/>,
    /// after which the close and delete happen when the last query ends) and deletes its directory.
    /// Defining the name again afterwards starts a new index at generation 1.
    /// </summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    /// <exception cref="RebuildConflictException">The index is already being deleted.</exception>
    /// <exception cref="IOException">The catalog could not be written: the index was not deleted and serves on (a rebuild that ran was cancelled; a first build resumes at the next start or with a rebuild).</exception>
    public async Task<IndexDeleteResult> DeleteAsync(string name)
    {
        var managed = Find(name);
        lock (_lock)
        {
            ThrowIfDeletingLocked(name);
            if (!ReferenceEquals(_indexes.GetValueOrDefault(name), managed))
            {
                throw new IndexNotFoundException(name);
            }

            _deleting.Add(name);
        }

        var committed = false;
        ServingIndex? paused = null;
        string? note = null;
        RebuildProgress? cancelled = null;
        try
        {
            RebuildRun? run;
            lock (_lock)
            {
                run = managed.Rebuild;
            }

            if (run is not null)
            {
                run.RequestCancel();
                await run.Completion.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
                cancelled = run.Progress();
            }

            // Read after the rebuild ended: one already past its switch finished and now serves.
            if (managed.Active is { } active && TryPauseFollowing(active.Index))
            {
                paused = active;
            }

            Hook(name, DeletePoint.RebuildStopped);
            lock (_lock)
            {
                try
                {
                    UpdateCatalog(name, static _ => null, atRename: () => Hook(name, DeletePoint.CatalogTempWritten));
                }
                catch (FileReplacedNotDurableException e)
                {
                    // Renamed into place: past the commit point (the directory fsync before the delete below retries it).
                    note = $"the catalog no longer names the index, but that could not be made durable at once ({Describe(e)})";
                }

                committed = true;
                _indexes.Remove(name);
                managed.Deleted = true;
            }
        }
        catch when (!committed)
        {
            if (paused is not null)
            {
                ResumeFollowingQuietly(paused.Index);
            }

            lock (_lock)
            {
                _deleting.Remove(name);
            }

            throw;
        }

        Hook(name, DeletePoint.CatalogWritten);
        var generations = GenerationsOf(managed);
        var drained = Task.WhenAll(generations.Select(static generation => generation.RetireAsync()));
        await drained.WaitAsync(_options.DrainTimeout, CancellationToken.None).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        if (drained.IsCompleted)
        {
            note = Join(note, RemoveDeleted(name, generations));
        }
        else
        {
            // Closing now would pull the index out from under a running query; shutdown closes them
            // if the process stops first, and the next open deletes the directory.
            var running = generations.Sum(static generation => generation.RunningQueries);
            note = Join(note,
                $"{running} {(running == 1 ? "query" : "queries")} still ran on the index after {_options.DrainTimeout.TotalSeconds:0.#} s; " +
                "its directory is deleted when the last one ends, and the name can be defined again then");
            _pending.Retired(generations);

            Track(drained.ContinueWith(_ => RemoveDeleted(name, generations), CancellationToken.None, TaskContinuationOptions.None, TaskScheduler.Default));
        }

        return new IndexDeleteResult(name, managed.Generation, cancelled, note);
    }

    // Caller holds _lock.
    private void ThrowIfDeletingLocked(string name)
    {
        if (_deleting.Contains(name))
        {
            throw RebuildConflictException.BeingDeleted(name);
        }
    }

    // The index's open generations: the serving one, and any a swap retired that a query still holds.
    private List<ServingIndex> GenerationsOf(ManagedIndex managed)
    {
        var indexDirectory = Path.Combine(_catalog.Root, managed.Name);
        List<ServingIndex> generations = managed.Active is { } active ? [active] : [];
        generations.AddRange(_pending.RetiredNow().Where(retired =>
            !generations.Contains(retired) && string.Equals(Path.GetDirectoryName(retired.Index.Directory), indexDirectory, StringComparison.Ordinal)));

        return generations;
    }

    // Step 3, once no query runs on the generations: close them, then (the catalog durable) delete
    // every generation directory and the index directory. Past the commit point: a failure is
    // returned as a note, and the name stays reserved until the next open deletes what is left.
    private string? RemoveDeleted(string name, List<ServingIndex> generations)
    {
        _pending.Closed(generations);

        var indexDirectory = Path.Combine(_catalog.Root, name);
        try
        {
            foreach (var generation in generations)
            {
                CloseGeneration(generation);
            }

            Hook(name, DeletePoint.GenerationsClosed);
            lock (_lock)
            {
                // A power loss must not bring back a catalog that names a deleted directory.
                _catalog.SyncDirectory();
            }

            if (Directory.Exists(indexDirectory))
            {
                foreach (var generationDirectory in Directory.GetDirectories(indexDirectory))
                {
                    DocumentIndex.DeleteDirectory(generationDirectory);
                    Hook(name, DeletePoint.GenerationDeleted);
                }

                Directory.Delete(indexDirectory, recursive: true);
            }

            Hook(name, DeletePoint.Deleted);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return $"the index is deleted, but its directory {MessageText.QuotePath(indexDirectory)} could not be removed ({Describe(e)}); " +
                "the next start deletes it, and the name can be defined again after that";
        }

        lock (_lock)
        {
            _deleting.Remove(name);
        }

        return null;
    }
}

/// <summary>What <see cref="IndexManager.DeleteAsync"/> deleted.</summary>
/// <param name="Name">The index's name.</param>
/// <param name="Generation">The generation that served when it was deleted.</param>
/// <param name="Rebuild">The index's last rebuild of this process as it ended (Cancelled when the delete stopped it); null when none ran.</param>
/// <param name="Note">What an operator should know: a directory left for the next start to delete, or queries that still held it.</param>
public sealed record IndexDeleteResult(string Name, int Generation, RebuildProgress? Rebuild, string? Note);
