using System.Diagnostics;
using Indexing.Storage;

namespace Indexing.Indexer.Tests.SideBySide;

// A rebuild's bulk phase stopped after a bulk commit resumes after its key when the manager opens
// again, on a newer snapshot, and misses and duplicates nothing (IndexManager.Rebuild.cs, BulkAsync,
// says why): documents up to the key that changed in between come from the catch-up from S.
public sealed class BulkResumeTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Reopen_AfterABulkCommit_ResumesAfterTheKey_AndChangesOnBothSidesOfItAreIndexed()
    {
        using var env = new ManagerEnvironment(documents: 600);
        var sources = new CountingBulkSources(ManagerEnvironment.AdaptiveSource, delayPerTake: TimeSpan.FromMilliseconds(20));
        await StopMidBulkAfterABulkCommitAsync(env, sources);

        var checkpoint = LuceneIndexSink.ReadLastCommit(Path.Combine(env.IndexRoot, "orders", "g000002"));
        Assert.NotNull(checkpoint);
        var snapshotEtag = Assert.NotNull(checkpoint.Value.BuildSnapshotEtag);
        var key = Assert.IsType<string>(checkpoint.Value.BuildIndexedThrough);
        var before = env.Store.ScanMetadata("orders").Select(m => m.Id).ToList();
        var atOrBelow = before.Where(id => DocumentIds.CompareKeyOrder(id, key) <= 0).ToList();
        var after = before.Where(id => DocumentIds.CompareKeyOrder(id, key) > 0).ToList();
        Assert.True(atOrBelow.Count >= 5 && after.Count >= 10, $"key {key} should be inside the collection ({atOrBelow.Count} at or below, {after.Count} after)");

        // Changes between S and the resumed run's snapshot, on both sides of the key: updates,
        // deletes and new documents.
        string[] updated = [.. atOrBelow.Take(3), .. after.Take(3)];
        string[] deleted = [.. atOrBelow.Skip(3).Take(2), .. after.Skip(3).Take(3)];
        string[] created = [$"{atOrBelow[0]}-new", $"{after[0]}-new"];
        foreach (var id in updated.Concat(created))
        {
            env.Store.Put(id, """{"customer":{"name":"changed"},"status":"changed-after-s","total":1,"itemCount":1,"paid":false}""");
        }

        foreach (var id in deleted)
        {
            env.Store.Delete(id);
        }

        Assert.True(env.Store.LastEtag > snapshotEtag);
        var liveAfterKey = env.Store.ScanMetadata("orders").Select(m => m.Id).Count(id => DocumentIds.CompareKeyOrder(id, key) > 0);

        var manager = env.OpenManager(bulkSources: sources.Start);
        var resumed = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Done, resumed.Phase);
        Assert.Equal(key, sources.Requests.Last().StartAfterId);
        Assert.Equal(key, resumed.ResumedAfter);
        Assert.Equal(atOrBelow.Count, resumed.DocumentsSkipped);
        Assert.Equal(snapshotEtag, resumed.SnapshotEtag);
        // Only the documents after the key were read again, each once.
        Assert.All(sources.Read, id => Assert.True(DocumentIds.CompareKeyOrder(id, key) > 0, $"{id} is not after the key {key}"));
        Assert.Equal(liveAfterKey, sources.Read.Count);
        Assert.Equal(liveAfterKey, sources.Read.Distinct().Count());
        Assert.Equal(2, manager.GetSummary("orders").Generation);
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(env.LiveDocuments(), report.IndexDocuments);
        Assert.Equal(updated.Length + created.Length, manager.Query("orders", new IndexQuery("status:changed-after-s")).TotalHits);
        foreach (var id in deleted)
        {
            Assert.Equal(0, manager.Query("orders", new IndexQuery($"__id:\"{id}\"")).TotalHits);
        }
    }

    [Fact]
    public async Task Reopen_WithASourceThatIgnoresTheKey_StartsTheBulkPhaseOver_AndSaysSo()
    {
        using var env = new ManagerEnvironment(documents: 600);
        await StopMidBulkAfterABulkCommitAsync(env, new CountingBulkSources(ManagerEnvironment.AdaptiveSource, delayPerTake: TimeSpan.FromMilliseconds(20)));
        Assert.NotNull(LuceneIndexSink.ReadLastCommit(Path.Combine(env.IndexRoot, "orders", "g000002"))?.BuildIndexedThrough);

        var fromTheStart = new CountingBulkSources((request, token) => ManagerEnvironment.AdaptiveSource(request with { StartAfterId = null }, token));
        // Read on its own: a shared pass's reader would skip what the source hands out up to its key itself
        // (SharedPassRebuildTests), so the source's start would not matter.
        var options = ManagerEnvironment.FastOptions();
        var manager = env.OpenManager(options with { Index = options.Index with { SharedPassWindow = TimeSpan.Zero } }, bulkSources: fromTheStart.Start);
        var rebuilt = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Done, rebuilt.Phase);
        Assert.NotNull(Assert.Single(fromTheStart.Requests).StartAfterId);
        Assert.Null(rebuilt.ResumedAfter);
        Assert.Equal(0, rebuilt.DocumentsSkipped);
        Assert.Contains("did not start after", rebuilt.Note, StringComparison.Ordinal);
        Assert.Equal(env.LiveDocuments(), fromTheStart.Read.Count);
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(env.LiveDocuments(), report.IndexDocuments);
    }

    [Fact]
    public async Task Build_ShortWithAnHourCap_CommitsMoreThanOnce_AtTheCadenceItShows()
    {
        using var env = new ManagerEnvironment(documents: 600);
        var bulkCommits = 0;
        TimeSpan? cadenceInBulk = null;
        IndexManager? manager = null;
        // The ids in key order: a bulk commit records the contiguous prefix handed out, so the feeder is
        // held on that prefix, not on the documents read (the adaptive source hands out whatever is
        // ready: a slow first range can leave the prefix empty after hundreds of documents, then move
        // it past several hundred at once).
        var ids = env.Store.ScanMetadata("orders").Select(m => m.Id).Order(StringComparer.Ordinal).ToList();
        var heldAt = 0;
        var sources = new CountingBulkSources(ManagerEnvironment.AdaptiveSource)
        {
            // Until two bulk commits were made, the feeder waits for one commit more each time the
            // handed-out prefix has moved since it last waited: the indexing threads then finish what it
            // took, so the key moves and a commit is due, and with the cap (an hour) as the cadence none
            // would come before the hang guard.
            BeforeTake = async (read, handedOutThrough, token) =>
            {
                var prefix = handedOutThrough is null ? 0 : ids.BinarySearch(handedOutThrough, StringComparer.Ordinal) + 1;
                var needed = Volatile.Read(ref bulkCommits) + 1;
                if (needed > 2 || prefix <= heldAt)
                {
                    return;
                }

                heldAt = prefix;
                var waiting = Stopwatch.StartNew();
                while (Volatile.Read(ref bulkCommits) < needed)
                {
                    // The commit is due within the cadence the rebuild shows, which includes twice the last
                    // commit's duration: on a machine loaded enough for a commit to take seconds, it waits
                    // that much longer (at most 2 minutes more: a cadence at the hour's cap fails the test).
                    var shown = manager!.GetRebuild("orders")?.BulkCommitInterval ?? TimeSpan.Zero;
                    if (waiting.Elapsed > HangGuard + (2 * (shown < TimeSpan.FromMinutes(1) ? shown : TimeSpan.FromMinutes(1))))
                    {
                        throw new TimeoutException($"no bulk commit {needed} within {waiting.Elapsed} after a prefix of {prefix} documents ({read} read; cadence {shown})");
                    }

                    await Task.Delay(10, token);
                }

                cadenceInBulk ??= manager!.GetRebuild("orders")?.BulkCommitInterval;
            },
        };
        var options = ManagerEnvironment.FastOptions((_, point) =>
        {
            if (point == RebuildPoint.BulkCheckpointed)
            {
                Interlocked.Increment(ref bulkCommits);
            }
        });
        manager = env.OpenManager(options with { Index = options.Index with { BulkCommitInterval = TimeSpan.FromHours(1), TakeMaxDocuments = 20 } }, bulkSources: sources.Start);

        manager.CreateOrUpdate(ManagerEnvironment.V1);
        var built = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.True(built.Phase == RebuildPhase.Done, $"{built.Phase}: {built.Error}");
        Assert.True(built.BulkCommits >= 2, $"{built.BulkCommits} bulk commits");
        Assert.Equal(Volatile.Read(ref bulkCommits), built.BulkCommits);
        // The cadence of a build of seconds: the floor (or a few times a slow commit), far below the cap.
        var cadence = Assert.NotNull(cadenceInBulk);
        Assert.InRange(cadence, BulkCommitCadence.MinimumInterval, TimeSpan.FromMinutes(1));
        Assert.NotNull(built.BulkCommitInterval);
        Assert.Equal(env.LiveDocuments(), sources.Read.Count);
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(env.LiveDocuments(), report.IndexDocuments);
    }

    // Builds V1, then rebuilds to V2 through sources (slowed), holds the bulk phase's feeder once 200
    // of the 600 documents are a handed-out prefix, and closes the manager once a bulk commit recorded a
    // key: the replacement g000002 holds an interrupted build whose key is about 200 documents in.
    private static async Task StopMidBulkAfterABulkCommitAsync(ManagerEnvironment env, CountingBulkSources sources)
    {
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        await env.CloseManagerAsync();

        using var checkpointed = new SemaphoreSlim(0);
        sources.HoldAfterDocuments = 200;
        manager = env.OpenManager(SlowBulkOptions((_, point) =>
        {
            if (point == RebuildPoint.BulkCheckpointed)
            {
                checkpointed.Release();
            }
        }), bulkSources: sources.Start);
        manager.CreateOrUpdate(ManagerEnvironment.V2);
        Assert.True(await checkpointed.WaitAsync(HangGuard), "the bulk phase made no bulk commit");
        await env.CloseManagerAsync().WaitAsync(HangGuard);
        sources.HoldAfterDocuments = null;
    }

    // Bulk commits every 100 ms, and small takes so that the delayed source makes a bulk phase of 600
    // documents last a few seconds.
    internal static IndexManagerOptions SlowBulkOptions(Action<string, RebuildPoint>? hook = null)
    {
        var options = ManagerEnvironment.FastOptions(hook);
        return options with { Index = options.Index with { BulkCommitInterval = TimeSpan.FromMilliseconds(100), TakeMaxDocuments = 20 } };
    }
}
