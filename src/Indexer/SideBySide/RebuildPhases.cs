using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// The first two phases of a side-by-side rebuild, on the run's replacement: the bulk phase (a batch
/// source over a snapshot, from the <see cref="BulkSourceFactory"/> the manager was given, watched
/// by its <see cref="IRebuildObserver"/>) and the catch-up on the change feed after it. Owns where
/// bulk sources come from and who watches them; the run owns its own progress.
/// </summary>
/// <remarks>
/// Threading: runs on the rebuild's task, one call per run at a time; it takes no lock of the
/// manager (neither phase changes the catalog or the map of indexes: the manager persists each
/// phase change itself). <c>hook</c> is the manager's test hook.
/// </remarks>
internal sealed class RebuildPhases(
    DocumentStore store, IndexManagerOptions options, SharedPasses passes, IRebuildObserver? observer, Action<string, RebuildPoint> hook)
{
    // The bulk phase, fresh or resumed.
    //
    // Resuming. An interrupted bulk phase whose replacement's last commit records the snapshot etag S
    // it read and an indexed-through key K (every document of S with an id up to K is in that commit)
    // resumes without discarding anything: the factory starts a source that reads only the ids after
    // K, on a new snapshot S2 (S2 >= S); the replacement replaces by id; its bulk commits and its last
    // commit keep S (not S2) as the build's snapshot etag and then as its etag, so the catch-up applies
    // the change feed from S. Why that misses and duplicates nothing, per document d:
    // - d <= K, unchanged since S: in the commit as of S, which is d as it is now.
    // - d <= K, changed (or created) after S: every put moves d's one live change entry to a new,
    //   higher etag (change entries only move forward), so d has an entry after S and the catch-up
    //   from S applies it, whether the change came before S2 or after.
    // - d <= K, deleted after S: its tombstone has an entry after S, and survives until the catch-up
    //   applied it: the replacement holds the store's tombstone low watermark at S (its build
    //   snapshot etag, IndexManager.Tombstones.cs) for the whole bulk phase, resumed runs included.
    // - d > K: read again from S2 if it is live there, replacing by id any copy the interrupted run
    //   had added past K (batches finished out of order are in the commit beyond the key): an
    //   update, not a duplicate; changes after S2 come from the catch-up like any other.
    // - d > K, in the commit but deleted after S (so not in S2): its tombstone is after S; the
    //   catch-up deletes it.
    // The catch-up re-applies what changed between S and S2 though S2 already had it: by id, so
    // harmless. Tested by BulkResumeTests (in process) and BulkResumeCrashTests (a killed process).
    public async Task BulkAsync(RebuildRun run, CancellationToken token)
    {
        var status = run.Target.GetStatus();
        if (!status.BuildInterrupted && status.CommittedEtag > 0)
        {
            // Resumed after a crash that came after the bulk phase's final commit but before the
            // phase change was persisted: the replacement is complete up to its snapshot.
            run.SnapshotEtag = status.CommittedEtag;
            return;
        }

        var resumeAfter = ResumableKey(run, status);
        var prefetch = await passes.JoinAsync(
            new BulkSourceRequest(store, run.Name, run.Definition.Collection, resumeAfter),
            run.AddNote,
            token).ConfigureAwait(false);
        await using (prefetch.ConfigureAwait(false))
        {
            if (resumeAfter is not null && prefetch.HandedOutThrough != resumeAfter)
            {
                run.AddNote($"the bulk source did not start after {MessageText.Quote(resumeAfter)} as asked, so the bulk phase started over");
                resumeAfter = null;
            }

            if (resumeAfter is not null)
            {
                run.MarkResumed(resumeAfter, run.Target.CountDocumentsThrough(resumeAfter));
            }

            run.SnapshotEtag = resumeAfter is null ? prefetch.SnapshotEtag : status.BuildSnapshotEtag!.Value;
            run.AttachPrefetch(prefetch);
            var watched = observer?.BulkStarted(run.Name, prefetch);
            hook(run.Name, RebuildPoint.BulkStarted);
            try
            {
                await run.Target.BuildAsync(
                    new HookedBatchSource(prefetch, () => hook(run.Name, RebuildPoint.BulkBatchTaken)),
                    resume: resumeAfter is not null,
                    bulkCommitted: _ =>
                    {
                        run.BulkCommitted();
                        hook(run.Name, RebuildPoint.BulkCheckpointed);
                    },
                    token).ConfigureAwait(false);
            }
            finally
            {
                watched?.Dispose();
                run.DetachPrefetch();
            }
        }
    }

    // The key an interrupted bulk phase can resume after, or null to start it over: when its build
    // committed no complete prefix yet, when its key is not an id of the collection (a damaged
    // commit), when its snapshot is newer than the store (a store restored from an older backup,
    // or writes lost: what the replacement holds is not the store's any more), or when its commit
    // holds fewer documents up to the key than it recorded (a failed write dropped some).
    private string? ResumableKey(RebuildRun run, IndexStatus status)
    {
        if (!status.BuildInterrupted || status.BuildSnapshotEtag is not { } snapshotEtag || status.BuildIndexedThrough is not { } key)
        {
            return null;
        }

        if (snapshotEtag > store.LastEtag)
        {
            run.AddNote($"the interrupted bulk phase read a snapshot at etag {snapshotEtag:N0}, past the store's last etag {store.LastEtag:N0}; it started over");
            return null;
        }

        if (!DocumentIds.TryValidate(key, out _) || !DocumentIds.GetCollection(key).SequenceEqual(run.Definition.Collection))
        {
            run.AddNote($"the interrupted bulk phase's key {MessageText.Quote(key)} is not an id of collection {MessageText.Quote(run.Definition.Collection)}; it started over");
            return null;
        }

        if (run.Target.InterruptedBuildKeyProblem() is { } problem)
        {
            run.AddNote($"the interrupted bulk phase's last commit lost documents ({problem}); it started over");
            return null;
        }

        return key;
    }

    // Applies the change feed in rounds, each up to the store's last etag when it starts (a round
    // always ends, however fast writes arrive), until the replacement is at most SwapLagEtags
    // behind, or three rounds in a row did not shrink the lag: writes then arrive as fast as the
    // index applies them, the old generation lags just the same, and waiting would never end.
    public void CatchUp(RebuildRun run, CancellationToken token)
    {
        var previousLag = long.MaxValue;
        var roundsWithoutGain = 0;
        while (true)
        {
            token.ThrowIfCancellationRequested();
            var result = run.Target.CatchUp(store, upToEtag: store.LastEtag, token);
            hook(run.Name, RebuildPoint.CatchUpStep);
            var lag = store.LastEtag - result.ToEtag;
            if (lag <= options.SwapLagEtags)
            {
                return;
            }

            roundsWithoutGain = lag < previousLag ? 0 : roundsWithoutGain + 1;
            if (roundsWithoutGain >= 3)
            {
                run.AddNote($"catch-up stopped gaining at a lag of {lag:N0} etags (writes arrive as fast as they are indexed); swapped anyway, the new generation follows on");
                return;
            }

            previousLag = lag;
        }
    }
}
