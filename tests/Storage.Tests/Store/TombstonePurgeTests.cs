using Indexing.Storage;

namespace Indexing.Storage.Tests.Store;

public sealed class TombstonePurgeTests
{
    private static readonly StoreOptions _quietPurger = new(syncWrites: false, blockCacheBytes: 8 << 20, tombstonePurgeInterval: TimeSpan.FromHours(1));

    [Fact]
    public void TombstoneCount_FollowsDeletesAndPutsOverThem_AndSurvivesReopen()
    {
        using var temp = new TempStore(_quietPurger);
        foreach (var id in new[] { "a/1", "a/2", "a/3" })
        {
            temp.Store.Put(id, "{}");
        }

        temp.Store.Delete("a/1");
        temp.Store.Delete("a/2");
        temp.Store.Delete("a/3");
        Assert.Null(temp.Store.Delete("a/3")); // deleting a tombstone again counts nothing
        Assert.Equal(3, Held(temp.Store));

        temp.Store.Put("a/1", "{}");
        Assert.Equal(2, Held(temp.Store));
        // A bulk chunk with a tombstone's id twice: one tombstone fewer, not two.
        temp.Store.PutMany([new DocumentWrite("a/2", TempStore.Json("{}")), new DocumentWrite("a/2", TempStore.Json("{}")), new DocumentWrite("b/1", TempStore.Json("{}"))]);
        Assert.Equal(1, Held(temp.Store));

        temp.Reopen();

        Assert.Equal(1, Held(temp.Store));
        Assert.Equal(1, temp.Store.CountTombstoneRows());
        Assert.Equal(0, temp.Store.GetStatus().TombstonesPurged);
    }

    [Fact]
    public void Open_StoreWrittenBeforeTombstonesWereCounted_CountsThemOnce()
    {
        using var temp = new TempStore(_quietPurger);
        for (var i = 0; i < 50; i++)
        {
            temp.Store.Put($"a/{i}", "{}");
        }

        for (var i = 0; i < 50; i += 3)
        {
            temp.Store.Delete($"a/{i}");
        }

        // An older store has no tombstone state: take it away.
        temp.Store.Db.Remove(new byte[8], temp.Store.Db.GetColumnFamily(DocumentStore.ChangesFamily));
        temp.Reopen();

        Assert.Equal(17, Held(temp.Store));
        temp.Store.Delete("a/1");
        temp.Reopen();
        Assert.Equal(18, Held(temp.Store));
    }

    [Fact]
    public void Purge_NothingRegistered_PurgesNothing()
    {
        using var temp = new TempStore(_quietPurger);
        temp.Store.Put("a/1", "{}");
        temp.Store.Delete("a/1");

        var round = temp.Store.PurgeTombstones();

        Assert.Null(round.Watermark);
        Assert.Equal(1, Held(temp.Store));
        Assert.Null(temp.Store.GetStatus().TombstoneLowWatermark);
        Assert.Single(temp.Store.ReadChanges(0), c => c.Deleted);
    }

    [Fact]
    public void Purge_RemovesTombstonesAtOrBelowTheLowestWatermarkOnly()
    {
        using var temp = new TempStore(_quietPurger);
        for (var i = 0; i < 10; i++)
        {
            temp.Store.Put($"a/{i}", "{}");
        }

        var deletes = new Dictionary<string, long>();
        for (var i = 0; i < 10; i += 2)
        {
            deletes[$"a/{i}"] = temp.Store.Delete($"a/{i}")!.Value;
        }

        var watermark = deletes["a/4"];
        using var low = temp.Store.RegisterTombstoneWatermark(() => watermark);
        using var high = temp.Store.RegisterTombstoneWatermark(() => long.MaxValue);

        var round = temp.Store.PurgeTombstones();

        Assert.Equal(watermark, round.Watermark);
        Assert.Equal(3, round.Purged);
        var status = temp.Store.GetTombstoneStatus();
        Assert.Equal(2, status.Held);
        Assert.Equal(3, status.Purged);
        Assert.Equal(watermark, status.PurgedThroughEtag);
        Assert.Equal(watermark, status.LowWatermark);
        Assert.Equal(2, temp.Store.CountTombstoneRows());
        var deletedInFeed = temp.Store.ReadChanges(0).Where(c => c.Deleted).Select(c => c.Id).ToList();
        Assert.Equal(["a/6", "a/8"], deletedInFeed);
        Assert.Equal(5, temp.Store.ScanMetadata().Count());
        Assert.All(Enumerable.Range(0, 10).Where(i => i % 2 == 1), i => Assert.NotNull(temp.Store.Get($"a/{i}")));
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public void Purge_OfTheNewestChangeEntry_EtagsAreNotIssuedAgainAfterRestart()
    {
        using var temp = new TempStore(_quietPurger);
        temp.Store.Put("a/1", "{}");
        temp.Store.Put("a/2", "{}");
        temp.Store.Delete("a/1");
        var last = temp.Store.Delete("a/2")!.Value;
        using (temp.Store.RegisterTombstoneWatermark(() => long.MaxValue))
        {
            temp.Store.PurgeTombstones();
        }

        Assert.Empty(temp.Store.ReadChanges(0));

        temp.Reopen();

        Assert.Equal(last, temp.Store.LastEtag);
        Assert.Equal(last + 1, temp.Store.Put("a/3", "{}"));
        Assert.Equal(0, Held(temp.Store));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Purge_SameIdWrittenBetweenScanAndLock_LeavesTheNewWriteAlone(bool deletedAgain)
    {
        using var temp = new TempStore(_quietPurger);
        temp.Store.Put("a/1", """{"v":1}""");
        var tombstone = temp.Store.Delete("a/1")!.Value;
        using var registration = temp.Store.RegisterTombstoneWatermark(() => tombstone);
        long? put = null;
        temp.Store.PurgeBeforeLock = () =>
        {
            if (put is null)
            {
                put = temp.Store.Put("a/1", """{"v":2}""");
                if (deletedAgain)
                {
                    temp.Store.Delete("a/1");
                }
            }
        };

        var round = temp.Store.PurgeTombstones();

        Assert.Equal(0, round.Purged);
        if (deletedAgain)
        {
            Assert.Null(temp.Store.Get("a/1"));
            Assert.Equal(1, Held(temp.Store));
            Assert.Single(temp.Store.ReadChanges(0), c => c.Deleted && c.Id == "a/1");
        }
        else
        {
            Assert.Equal("""{"v":2}""", TempStore.Text(temp.Store.Get("a/1")!.Value.Body));
            Assert.Equal(put, temp.Store.GetMetadata("a/1")!.Value.Etag);
            Assert.Equal(0, Held(temp.Store));
            Assert.Equal([put!.Value], temp.Store.ReadChanges(0).Select(c => c.Etag));
        }

        Assert.Equal(Held(temp.Store), temp.Store.CountTombstoneRows());
    }

    [Fact]
    public void Purge_CrashBetweenBatches_ReopenedStoreIsConsistent_AndTheNextRoundFinishes()
    {
        const int Documents = 3000; // many batches of at most PurgeBatchTombstones
        using var temp = new TempStore(_quietPurger);
        temp.Store.PutMany(Enumerable.Range(0, Documents + 100).Select(i => new DocumentWrite($"a/{i:D5}", TempStore.Json($$"""{"n":{{i}}}"""))));
        for (var i = 0; i < Documents; i++)
        {
            temp.Store.Delete($"a/{i:D5}");
        }

        var lastEtag = temp.Store.LastEtag;
        using (temp.Store.RegisterTombstoneWatermark(() => long.MaxValue))
        {
            temp.Store.PurgeBatchWritten = batch =>
            {
                if (batch == 2)
                {
                    throw new InvalidOperationException("crash after the second batch");
                }
            };
            Assert.Throws<InvalidOperationException>(() => temp.Store.PurgeTombstones());
        }

        temp.Reopen();

        var status = temp.Store.GetTombstoneStatus();
        Assert.Equal(2 * DocumentStore.PurgeBatchTombstones, status.Purged);
        Assert.Equal(Documents - status.Purged, status.Held);
        Assert.Equal(status.Held, temp.Store.CountTombstoneRows());
        Assert.Equal(status.Held, temp.Store.ReadChanges(0).Count(c => c.Deleted));
        Assert.DoesNotContain(temp.Store.ReadChanges(0), c => c.Deleted && c.Etag <= status.PurgedThroughEtag);
        Assert.Equal(lastEtag, temp.Store.LastEtag);
        Assert.Equal(100, temp.Store.ScanMetadata().Count());
        Assert.All(Enumerable.Range(Documents, 100), i => Assert.Equal($$"""{"n":{{i}}}""", TempStore.Text(temp.Store.Get($"a/{i:D5}")!.Value.Body)));

        using var registration = temp.Store.RegisterTombstoneWatermark(() => long.MaxValue);
        var round = temp.Store.PurgeTombstones();

        Assert.Equal(Documents - (2 * DocumentStore.PurgeBatchTombstones), round.Purged);
        Assert.Equal(0, Held(temp.Store));
        Assert.Equal(0, temp.Store.CountTombstoneRows());
        Assert.Equal(100, temp.Store.ReadChanges(0).Count());
        Assert.Equal(lastEtag + 1, temp.Store.Put("a/new", "{}"));
    }

    [Fact]
    public void BackgroundPurger_PurgesOnceRegistered_AndStopsWhenUnregistered()
    {
        using var temp = new TempStore(new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, tombstonePurgeInterval: TimeSpan.FromMilliseconds(10)));
        for (var i = 0; i < 100; i++)
        {
            temp.Store.Put($"a/{i}", "{}");
            temp.Store.Delete($"a/{i}");
        }

        var registration = temp.Store.RegisterTombstoneWatermark(() => long.MaxValue);
        WaitUntil(() => Held(temp.Store) == 0, "the background purger to purge every tombstone");
        registration.Dispose();
        temp.Store.Put("b/1", "{}");
        temp.Store.Delete("b/1");

        var round = temp.Store.PurgeTombstones(); // what every later background round does too

        Assert.Null(round.Watermark);
        Assert.Equal(100, temp.Store.GetStatus().TombstonesPurged);
        Assert.Equal(1, Held(temp.Store));
        Assert.Null(temp.Store.GetStatus().TombstoneLowWatermark);
    }

    [Fact]
    public void BackgroundPurger_WatermarkThatThrows_IsReportedInStatus_AndTheStoreGoesOn()
    {
        using var temp = new TempStore(new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, tombstonePurgeInterval: TimeSpan.FromMilliseconds(10)));
        temp.Store.Put("a/1", "{}");
        temp.Store.Delete("a/1");
        var fail = true;
        using var registration = temp.Store.RegisterTombstoneWatermark(() => Volatile.Read(ref fail) ? throw new InvalidOperationException("the index owner is closing") : long.MaxValue);

        WaitUntil(() => temp.Store.GetStatus().TombstonePurgeError is not null, "the failure to show in the status");
        Assert.Contains("the index owner is closing", temp.Store.GetStatus().TombstonePurgeError, StringComparison.Ordinal);
        Assert.Equal(3, temp.Store.Put("a/2", "{}"));
        Volatile.Write(ref fail, false);
        WaitUntil(() => Held(temp.Store) == 0 && temp.Store.GetStatus().TombstonePurgeError is null, "a round to succeed");
    }

    [Fact]
    public void Dispose_WhilePurgerRuns_StopsItAndCloses()
    {
        var temp = new TempStore(new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, tombstonePurgeInterval: TimeSpan.FromMilliseconds(10)));
        var calls = 0;
        temp.Store.RegisterTombstoneWatermark(() =>
        {
            Interlocked.Increment(ref calls);
            return long.MaxValue;
        });
        WaitUntil(() => Volatile.Read(ref calls) > 0, "the purger to run a round");

        temp.Dispose();
        var after = Volatile.Read(ref calls);
        Thread.Sleep(50);

        Assert.Equal(after, Volatile.Read(ref calls));
        Assert.Throws<ObjectDisposedException>(() => temp.Store.RegisterTombstoneWatermark(() => 0));
    }

    [Fact]
    public void ScanCost_DoesNotGrowWithDeletesMadeLongAgo_OncePurged()
    {
        using var temp = new TempStore(_quietPurger);
        temp.Store.PutMany(Enumerable.Range(0, 1000).Select(i => new DocumentWrite($"live/{i:D5}", TempStore.Json("{}"))));
        var before = ScanCost.Measure(temp.Store);
        using var registration = temp.Store.RegisterTombstoneWatermark(() => long.MaxValue);

        var costs = new List<ScanCost>();
        foreach (var churn in new[] { 20_000, 40_000 })
        {
            temp.Store.PutMany(Enumerable.Range(0, churn).Select(i => new DocumentWrite($"gone/{churn}-{i:D6}", TempStore.Json("{}"))));
            for (var i = 0; i < churn; i++)
            {
                temp.Store.Delete($"gone/{churn}-{i:D6}");
            }

            var round = temp.Store.PurgeTombstones();
            Assert.Equal(churn, round.Purged);
            Assert.True(round.Compacted, "a round that purged this many compacts the purged range");
            costs.Add(ScanCost.Measure(temp.Store));
        }

        Assert.Equal(1000, before.LiveRows);
        Assert.All(costs, cost => Assert.True(cost.Total <= before.Total + 64, $"after 60,000 deletes the scan costs {cost}; before them {before}"));
    }

    private static long Held(DocumentStore store) => store.GetStatus().TombstonesHeld;

    private static void WaitUntil(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"timed out after 30 s waiting for {what}");
            Thread.Sleep(5);
        }
    }
}
