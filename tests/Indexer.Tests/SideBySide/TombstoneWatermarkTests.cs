using System.Text;

using Indexing.Storage;

namespace Indexing.Indexer.Tests.SideBySide;

// The manager hands the store its tombstone low watermark: tombstones go once every index and
// running rebuild is past them, and never before. Deletes a reader still needs reach it.
public sealed class TombstoneWatermarkTests
{
    private const string OtherJson = """
        { "name": "orders-b", "collection": "orders", "fields": [
          { "name": "status", "path": "status", "type": "keyword" }
        ] }
        """;

    private static readonly IndexQuery _all = new("*:*") { Take = 1 };

    [Fact]
    public async Task DeleteChurn_100k_WithAnIndexFollowing_TombstonesFallToZeroOnceItCatchesUp()
    {
        const int Documents = 100_000;
        using var env = new ManagerEnvironment(documents: 0);
        env.Store.PutMany(Enumerable.Range(0, Documents).Select(i => new DocumentWrite(Id(i), Body(i))));
        var manager = env.OpenManager(QuickCommits());
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Assert.Equal(Documents, manager.Query("orders", _all).TotalHits);

        long heldMost = 0;
        for (var i = 0; i < Documents; i++)
        {
            env.Store.Delete(Id(i));
            if (i % 10_000 == 0)
            {
                heldMost = Math.Max(heldMost, env.Store.GetStatus().TombstonesHeld);
            }
        }

        var last = env.Store.LastEtag;
        IndexTestWait.Until(() => manager.GetSummary("orders").Status.CommittedEtag == last, "the index to apply and commit every delete");
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the purger to purge every tombstone");

        var status = env.Store.GetTombstoneStatus();
        Assert.Equal(Documents, status.Purged);
        Assert.Equal(last, status.LowWatermark);
        Assert.Equal(0, env.Store.CountTombstoneRows());
        Assert.Empty(env.Store.ReadChanges(0));
        IndexTestWait.Until(() => manager.Query("orders", _all).TotalHits == 0, "the index to show every delete");
        Assert.True(manager.Verify("orders").IsConsistent);
        Assert.True(heldMost > 0, "the deletes were counted while they were made");
    }

    [Fact]
    public async Task PausedIndex_HoldsTheWatermark_AndStillReceivesEveryDelete()
    {
        using var env = new ManagerEnvironment(documents: 1000);
        var manager = env.OpenManager(QuickCommits());
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        manager.CreateOrUpdate(IndexDefinition.Parse(OtherJson));
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders-b");
        var paused = manager.Find("orders-b").Active!.Index;
        paused.PauseFollowing();
        var pausedAt = paused.GetStatus().CommittedEtag;
        var ids = env.Store.ScanMetadata("orders").Select(m => m.Id).Take(400).ToList();
        foreach (var id in ids)
        {
            env.Store.Delete(id);
        }

        var last = env.Store.LastEtag;
        IndexTestWait.Until(() => manager.GetSummary("orders").Status.CommittedEtag == last, "the following index to commit every delete");
        var round = env.Store.PurgeTombstones();

        Assert.Equal(pausedAt, round.Watermark);
        Assert.Equal(0, round.Purged);
        Assert.Equal(ids.Count, env.Store.GetStatus().TombstonesHeld);

        paused.ResumeFollowing();
        IndexTestWait.Until(() => manager.GetSummary("orders-b").Status.CommittedEtag == last, "the paused index, resumed, to commit every delete");
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the tombstones to go once both indexes passed them");
        IndexTestWait.Until(() => manager.Query("orders-b", _all).TotalHits == 600, "the resumed index to show the deletes");
        Assert.True(manager.Verify("orders-b").IsConsistent);
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    [Fact]
    public async Task IndexThatAppliedDeletesButHasNotCommittedThem_HoldsTheWatermarkAtItsCommit()
    {
        using var env = new ManagerEnvironment(documents: 500);
        var slowCommits = QuickCommits() with
        {
            Index = new IndexOptions { FollowPollInterval = TimeSpan.FromMilliseconds(20), CommitInterval = TimeSpan.FromHours(1) },
        };
        var manager = env.OpenManager(slowCommits);
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        var committed = manager.GetSummary("orders").Status.CommittedEtag;
        foreach (var id in env.Store.ScanMetadata("orders").Select(m => m.Id).Take(100).ToList())
        {
            env.Store.Delete(id);
        }

        var last = env.Store.LastEtag;
        IndexTestWait.Until(() => manager.GetSummary("orders").Status.AppliedEtag == last, "the index to apply every delete");
        var held = env.Store.PurgeTombstones();

        // A restart would follow the change feed from the commit, so the deletes after it stay.
        Assert.Equal(committed, held.Watermark);
        Assert.Equal(0, held.Purged);
        Assert.Equal(100, env.Store.GetStatus().TombstonesHeld);
        manager.Find("orders").Active!.Index.Commit();
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the purger to take the deletes once committed");
        Assert.Equal(last, env.Store.GetStatus().TombstoneLowWatermark);
    }

    [Fact]
    public async Task RebuildInItsBulkPhase_HoldsTheWatermarkAtItsSnapshot_AndItsReplacementMissesNoDelete()
    {
        using var atBatch = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var block = 0;
        using var env = new ManagerEnvironment(documents: 1000);
        var manager = env.OpenManager(QuickCommits((_, point) =>
        {
            if (point == RebuildPoint.BulkBatchTaken && Interlocked.Exchange(ref block, 0) == 1)
            {
                atBatch.Set();
                release.Wait(TimeSpan.FromSeconds(60));
            }
        }));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref block, 1);
        manager.StartRebuild("orders", ManagerEnvironment.V2);
        Assert.True(atBatch.Wait(TimeSpan.FromSeconds(60)), "the rebuild did not reach its bulk phase");
        var snapshot = manager.GetRebuild("orders")!.SnapshotEtag;
        var ids = env.Store.ScanMetadata("orders").Select(m => m.Id).Take(300).ToList();
        foreach (var id in ids)
        {
            env.Store.Delete(id);
        }

        var last = env.Store.LastEtag;
        IndexTestWait.Until(() => manager.GetSummary("orders").Status.CommittedEtag == last, "the serving generation to commit every delete");
        var held = env.Store.PurgeTombstones();
        release.Set();
        var rebuilt = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(snapshot, held.Watermark);
        Assert.Equal(0, held.Purged);
        Assert.Equal(RebuildPhase.Done, rebuilt.Phase);
        Assert.Equal(2, manager.GetSummary("orders").Generation);
        Assert.Equal(700, manager.Query("orders", _all).TotalHits);
        Assert.True(manager.Verify("orders").IsConsistent);
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the tombstones to go once the replacement passed them");
    }

    [Fact]
    public async Task RebuildStoppedByShutdownInItsBulkPhase_ItsReplacementRecordsTheSnapshot_AndHoldsTheWatermarkThereOnResume()
    {
        using var atBatch = new ManualResetEventSlim();
        using var resumed = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var block = 0;
        using var env = new ManagerEnvironment(documents: 800);
        var manager = env.OpenManager(QuickCommits((_, point) =>
        {
            if (point == RebuildPoint.BulkBatchTaken && Interlocked.Exchange(ref block, 0) == 1)
            {
                atBatch.Set();
                release.Wait(TimeSpan.FromSeconds(60));
            }
        }));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref block, 1);
        manager.StartRebuild("orders", ManagerEnvironment.V2);
        Assert.True(atBatch.Wait(TimeSpan.FromSeconds(60)), "the rebuild did not reach its bulk phase");
        var snapshot = manager.GetRebuild("orders")!.SnapshotEtag;
        var closing = env.CloseManagerAsync();
        release.Set();
        await closing.WaitAsync(TimeSpan.FromSeconds(60));
        var replacement = Path.Combine(env.IndexRoot, "orders", "g000002");

        Assert.Equal(snapshot, DocumentIndex.ReadResumeEtag(replacement));
        Assert.Null(DocumentIndex.ReadResumeEtag(Path.Combine(env.IndexRoot, "orders", "g000009")));

        foreach (var id in env.Store.ScanMetadata("orders").Select(m => m.Id).Take(100).ToList())
        {
            env.Store.Delete(id);
        }

        var last = env.Store.LastEtag;
        release.Reset();
        manager = env.OpenManager(QuickCommits((_, point) =>
        {
            if (point == RebuildPoint.IntentPersisted)
            {
                resumed.Set();
                release.Wait(TimeSpan.FromSeconds(60));
            }
        }));
        Assert.True(resumed.Wait(TimeSpan.FromSeconds(60)), "the rebuild did not resume");
        // The serving generation passes the deletes: only the resumed replacement holds them now.
        IndexTestWait.Until(() => manager.GetSummary("orders").Status.CommittedEtag == last, "the serving generation to commit every delete");
        var round = env.Store.PurgeTombstones();
        release.Set();
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(snapshot, round.Watermark);
        Assert.Equal(0, round.Purged);
        Assert.Equal(700, manager.Query("orders", _all).TotalHits);
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    [Fact]
    public async Task IndexThatCannotBeOpened_HoldsEveryTombstone_UntilARebuildReplacesIt()
    {
        using var env = new ManagerEnvironment(documents: 300);
        var manager = env.OpenManager(QuickCommits());
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        await env.CloseManagerAsync();
        foreach (var id in env.Store.ScanMetadata("orders").Select(m => m.Id).Take(50).ToList())
        {
            env.Store.Delete(id);
        }

        foreach (var segments in Directory.GetFiles(Path.Combine(env.IndexRoot, "orders", "g000001"), "segments_*"))
        {
            await File.WriteAllBytesAsync(segments, [1, 2, 3, 4, 5, 6, 7, 8]);
        }

        manager = env.OpenManager(QuickCommits());
        var held = env.Store.PurgeTombstones();
        Assert.Equal(IndexState.Error, manager.GetSummary("orders").Status.State);
        manager.StartRebuild("orders");
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(0, held.Watermark);
        Assert.Equal(0, held.Purged);
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the tombstones to go once the rebuilt index passed them");
        Assert.Equal(250, manager.Query("orders", _all).TotalHits);
    }

    [Fact]
    public async Task ManagerWithoutIndexes_ReleasesEveryTombstone_AndOnceClosedNothingIsPurged()
    {
        using var env = new ManagerEnvironment(documents: 100);
        foreach (var id in env.Store.ScanMetadata().Select(m => m.Id).Take(40).ToList())
        {
            env.Store.Delete(id);
        }

        env.OpenManager(QuickCommits());
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the purger to take every tombstone");

        Assert.Equal(long.MaxValue, env.Store.GetStatus().TombstoneLowWatermark);
        Assert.Equal(40, env.Store.GetStatus().TombstonesPurged);

        await env.CloseManagerAsync();
        env.Store.Put("orders/after", "{}");
        env.Store.Delete("orders/after");
        Assert.Null(env.Store.PurgeTombstones().Watermark);
        Assert.Equal(1, env.Store.GetStatus().TombstonesHeld);
    }

    // Commits often, so a committed etag (what holds the watermark) follows the applied one closely.
    private static IndexManagerOptions QuickCommits(Action<string, RebuildPoint>? hook = null) =>
        ManagerEnvironment.FastOptions(hook) with
        {
            Index = new IndexOptions
            {
                RefreshInterval = TimeSpan.FromMilliseconds(100),
                FollowPollInterval = TimeSpan.FromMilliseconds(20),
                CommitInterval = TimeSpan.FromMilliseconds(100),
            },
        };

    private static string Id(int i) => $"orders/c-{i:D6}";

    private static byte[] Body(int i) => Encoding.UTF8.GetBytes($$"""{"customer":{"name":"churn"},"status":"s{{i % 7}}","total":{{i}}}""");
}
