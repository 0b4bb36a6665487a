using System.Globalization;

using Indexing.Storage;

namespace Indexing.Indexer.Tests.SideBySide;

// A real process purges tombstones below its index's watermark and is killed (SIGKILL) right after
// one of the round's batches was written. The reopened store must have lost nothing: every live
// document as it was, every delete still a delete, counts that match the rows, no etag issued
// twice; and the index and the next purge round carry on from there.
[Trait("Category", "Crash")]
public sealed class TombstonePurgeCrashTests
{
    private const int Documents = 3000;
    private const int Deleted = 2500; // ten batches of at most DocumentStore.PurgeBatchTombstones (256)

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    public async Task KilledAfterAPurgeBatch_ReopenedStoreLosesNothing_AndThePurgeFinishes(int batch)
    {
        using var env = new ManagerEnvironment(documents: Documents);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        await env.CloseManagerAsync();
        // Deleted while no index follows: the tombstones wait for the index to pass them.
        var ids = env.Store.ScanMetadata("orders").Select(m => m.Id).ToList();
        var deleted = ids.Take(Deleted).ToList();
        foreach (var id in deleted)
        {
            env.Store.Delete(id);
        }

        var kept = ids.Skip(Deleted).ToDictionary(id => id, id => env.Store.Get(id)!.Value);
        var lastEtag = env.Store.LastEtag;
        env.Store.Dispose();

        await CrashHostProcess.RunUntilKilledAsync(
            ["purge", env.StoreDirectory, env.IndexRoot, batch.ToString(CultureInfo.InvariantCulture)], $"AT purge batch {batch}");

        env.ReopenStoreAfterClose();
        var status = env.Store.GetTombstoneStatus();
        Assert.Equal(Math.Min(Deleted, batch * DocumentStore.PurgeBatchTombstones), status.Purged);
        Assert.Equal(Deleted - status.Purged, status.Held);
        Assert.Equal(status.Held, env.Store.CountTombstoneRows());
        Assert.Equal(status.Held, env.Store.ReadChanges(0).Count(c => c.Deleted));
        Assert.DoesNotContain(env.Store.ReadChanges(0), c => c.Deleted && c.Etag <= status.PurgedThroughEtag);
        Assert.Equal(lastEtag, env.Store.LastEtag);
        Assert.All(deleted, id => Assert.Null(env.Store.Get(id)));
        foreach (var (id, document) in kept)
        {
            var stored = env.Store.Get(id);
            Assert.NotNull(stored);
            Assert.Equal(document.Etag, stored.Value.Etag);
            Assert.Equal(document.Body, stored.Value.Body);
        }

        manager = env.OpenManager();
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the next rounds to purge the rest");
        Assert.Equal(Deleted, env.Store.GetStatus().TombstonesPurged);
        Assert.Equal(Documents - Deleted, manager.Query("orders", new IndexQuery("*:*") { Take = 1 }).TotalHits);
        Assert.True(manager.Verify("orders").IsConsistent);
        Assert.Equal(lastEtag + 1, env.Store.Put("orders/after-restart", "{}"));
    }
}
