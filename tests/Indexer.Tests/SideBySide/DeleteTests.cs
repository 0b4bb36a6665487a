using System.Text.Json;

namespace Indexing.Indexer.Tests.SideBySide;

// Deleting an index: catalog first, then its generations and directory; a running rebuild or first
// build is cancelled first; the name can be defined again afterwards, from generation 1.
public sealed class DeleteTests
{
    private const int Documents = 300;
    private static readonly IndexQuery _all = new("*:*") { Take = 1 };
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Delete_ServingIndex_QueriesNotFound_DirectoryAndEntryGone_WatermarkReleased()
    {
        using var env = new ManagerEnvironment(documents: Documents);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        // Tombstones after the index's last commit: it holds the store's low watermark below them.
        foreach (var id in env.Store.ScanMetadata("orders").Select(m => m.Id).Take(20).ToList())
        {
            env.Store.Delete(id);
        }

        IndexTestWait.Until(() => env.Store.GetStatus().TombstoneLowWatermark < env.Store.LastEtag, "the index to hold the watermark");

        var deleted = await manager.DeleteAsync("orders").WaitAsync(_hangGuard);

        Assert.Equal(new IndexDeleteResult("orders", 1, deleted.Rebuild, Note: null), deleted);
        Assert.Equal(RebuildPhase.Done, deleted.Rebuild?.Phase);
        Assert.Throws<IndexNotFoundException>(() => manager.Query("orders", _all));
        Assert.Throws<IndexNotFoundException>(() => manager.GetSummary("orders"));
        Assert.Empty(manager.Names);
        Assert.False(Directory.Exists(Path.Combine(env.IndexRoot, "orders")));
        Assert.Empty(CatalogIndexes(env));
        IndexTestWait.Until(() => env.Store.GetStatus().TombstoneLowWatermark == long.MaxValue, "the watermark to be released");
        IndexTestWait.Until(() => env.Store.GetStatus().TombstonesHeld == 0, "the purger to take the tombstones");
        await Assert.ThrowsAsync<IndexNotFoundException>(() => manager.DeleteAsync("orders"));

        await env.CloseManagerAsync();
        Assert.Empty(env.OpenManager().Names);
    }

    [Fact]
    public async Task Delete_WhileARebuildRuns_TheRebuildEndsCancelled_AndBothGenerationsAreGone()
    {
        using var env = new ManagerEnvironment(documents: Documents);
        using var gate = new Gate();
        var manager = env.OpenManager(ManagerEnvironment.FastOptions(gate.Hook));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        gate.Arm();
        manager.CreateOrUpdate(ManagerEnvironment.V2);
        await gate.Reached.WaitAsync(_hangGuard);
        Assert.Equal(["g000001", "g000002"], env.GenerationDirectories("orders"));

        var deleting = manager.DeleteAsync("orders");
        gate.Release();
        var deleted = await deleting.WaitAsync(_hangGuard);

        Assert.Equal(RebuildPhase.Cancelled, deleted.Rebuild?.Phase);
        Assert.Equal(2, deleted.Rebuild?.Generation);
        Assert.Equal(1, deleted.Generation);
        Assert.False(Directory.Exists(Path.Combine(env.IndexRoot, "orders")));
        Assert.Empty(manager.Names);
        Assert.Empty(CatalogIndexes(env));
    }

    [Fact]
    public async Task Delete_DuringTheFirstBuild_TheBuildEndsCancelled_AndTheIndexIsGone()
    {
        using var env = new ManagerEnvironment(documents: Documents);
        using var gate = new Gate();
        var manager = env.OpenManager(ManagerEnvironment.FastOptions(gate.Hook));
        gate.Arm();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await gate.Reached.WaitAsync(_hangGuard);

        var deleting = manager.DeleteAsync("orders");
        gate.Release();
        var deleted = await deleting.WaitAsync(_hangGuard);

        Assert.Equal(RebuildPhase.Cancelled, deleted.Rebuild?.Phase);
        Assert.False(Directory.Exists(Path.Combine(env.IndexRoot, "orders")));
        Assert.Empty(manager.Names);
        Assert.Empty(CatalogIndexes(env));
        await env.CloseManagerAsync();
        Assert.Empty(env.OpenManager().Names);
    }

    [Fact]
    public async Task Delete_ThenDefineAgain_StartsAFreshGeneration1Build()
    {
        using var env = new ManagerEnvironment(documents: Documents);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        manager.StartRebuild("orders");
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Assert.Equal(2, manager.GetSummary("orders").Generation);

        await manager.DeleteAsync("orders").WaitAsync(_hangGuard);
        var put = manager.CreateOrUpdate(ManagerEnvironment.V2);
        var built = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(IndexPutResult.Created, put);
        Assert.Equal(RebuildPhase.Done, built.Phase);
        var summary = manager.GetSummary("orders");
        Assert.Equal(1, summary.Generation);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, summary.DefinitionHash);
        Assert.Equal(["g000001"], env.GenerationDirectories("orders"));
        Assert.Equal(Documents, manager.Query("orders", _all).TotalHits);
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
    }

    [Fact]
    public async Task Delete_AQueryOutlastsTheDrain_TheNameStaysReservedUntilItEnds_ThenTheDirectoryGoes()
    {
        using var env = new ManagerEnvironment(documents: Documents);
        using var release = new ManualResetEventSlim();
        var queryStarted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var fast = ManagerEnvironment.FastOptions();
        var manager = env.OpenManager(fast with
        {
            Index = fast.Index with { DrainTimeout = TimeSpan.FromMilliseconds(200) },
            QueryHook = (_, _) =>
            {
                queryStarted.TrySetResult();
                Assert.True(release.Wait(_hangGuard), "the test never released the query");
            },
        });
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        var query = Task.Run(() => manager.Query("orders", _all));
        await queryStarted.Task.WaitAsync(_hangGuard);

        var deleted = await manager.DeleteAsync("orders").WaitAsync(_hangGuard);

        Assert.Contains("1 query still ran on the index", deleted.Note, StringComparison.Ordinal);
        Assert.Throws<IndexNotFoundException>(() => manager.GetSummary("orders"));
        Assert.True(Directory.Exists(Path.Combine(env.IndexRoot, "orders")), "the directory went while a query ran on it");
        var reserved = Assert.Throws<RebuildConflictException>(() => manager.CreateOrUpdate(ManagerEnvironment.V1));
        Assert.Contains("'orders' is being deleted", reserved.Message, StringComparison.Ordinal);

        release.Set();
        Assert.Equal(Documents, (await query.WaitAsync(_hangGuard)).TotalHits);
        IndexTestWait.Until(() => !Directory.Exists(Path.Combine(env.IndexRoot, "orders")), "the directory to go once the query ended");
        IndexTestWait.Until(() => TryDefine(manager), "the name to be free again");
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Assert.Equal(1, manager.GetSummary("orders").Generation);
    }

    [Fact]
    public async Task Open_IndexDirectoriesTheCatalogDoesNotName_AreDeleted_OtherDirectoriesAreKept()
    {
        using var env = new ManagerEnvironment(documents: 10);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        await env.CloseManagerAsync();
        Directory.CreateDirectory(Path.Combine(env.IndexRoot, "deleted", "g000003"));
        File.WriteAllText(Path.Combine(env.IndexRoot, "deleted", "g000003", "segments_1"), "x");
        Directory.CreateDirectory(Path.Combine(env.IndexRoot, "emptied"));
        Directory.CreateDirectory(Path.Combine(env.IndexRoot, "other"));
        File.WriteAllText(Path.Combine(env.IndexRoot, "other", "notes.txt"), "not an index");

        manager = env.OpenManager();

        Assert.Equal(["orders"], manager.Names);
        Assert.False(Directory.Exists(Path.Combine(env.IndexRoot, "deleted")));
        Assert.False(Directory.Exists(Path.Combine(env.IndexRoot, "emptied")));
        Assert.True(File.Exists(Path.Combine(env.IndexRoot, "other", "notes.txt")));
        Assert.Equal(10, manager.Query("orders", _all).TotalHits);
    }

    private static bool TryDefine(IndexManager manager)
    {
        try
        {
            return manager.CreateOrUpdate(ManagerEnvironment.V1) == IndexPutResult.Created;
        }
        catch (RebuildConflictException)
        {
            return false;
        }
    }

    private static Dictionary<string, JsonElement> CatalogIndexes(ManagerEnvironment env)
    {
        using var catalog = JsonDocument.Parse(File.ReadAllBytes(Path.Combine(env.IndexRoot, "catalog.json")));
        return catalog.RootElement.GetProperty("indexes").EnumerateObject().ToDictionary(p => p.Name, p => p.Value.Clone());
    }

    // Holds the armed build at its first batch (reads in flight) until released.
    private sealed class Gate : IDisposable
    {
        private readonly TaskCompletionSource _reached = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly ManualResetEventSlim _release = new();
        private int _armed;

        public Task Reached => _reached.Task;

        public void Arm() => Volatile.Write(ref _armed, 1);

        public void Release() => _release.Set();

        public void Hook(string name, RebuildPoint point)
        {
            if (point == RebuildPoint.BulkBatchTaken && Interlocked.Exchange(ref _armed, 0) == 1)
            {
                _reached.TrySetResult();
                Assert.True(_release.Wait(_hangGuard), "the test never released the build");
            }
        }

        public void Dispose()
        {
            _release.Set();
            _release.Dispose();
        }
    }
}
