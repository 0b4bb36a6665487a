using System.Collections.Concurrent;
using Indexing.Storage;

namespace Indexing.Indexer.Tests.SideBySide;

public sealed class RebuildTests
{
    private static readonly IndexQuery _all = new("*:*") { Take = 1 };

    [Fact]
    public async Task CreateOrUpdate_NewIndex_IsBuiltThenFollowsAndVerifies()
    {
        using var env = new ManagerEnvironment(documents: 1500);
        var manager = env.OpenManager();

        var created = manager.CreateOrUpdate(ManagerEnvironment.V1);
        var built = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        env.Store.Put("orders/new-one", """{"customer":{"name":"Zed Zebra"},"status":"new","total":1.5}""");

        Assert.Equal(IndexPutResult.Created, created);
        Assert.Equal(RebuildPhase.Done, built.Phase);
        Assert.Equal(IndexPutResult.Unchanged, manager.CreateOrUpdate(ManagerEnvironment.V1));
        IndexTestWait.Until(() => manager.Query("orders", new IndexQuery("customer:zebra")).TotalHits == 1, "the new document to be queryable");
        Assert.Equal(1501, manager.Query("orders", _all).TotalHits);
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(1501, report.StoreDocuments);
    }

    [Fact]
    public async Task Rebuild_UnderWritesAndQueries_NoQueryFails_AndSwapsToAConsistentIndex()
    {
        using var env = new ManagerEnvironment(documents: 3000);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        using var stop = new CancellationTokenSource();
        var failures = new ConcurrentBag<Exception>();
        long queries = 0, writes = 0;
        // Blocking loops get threads of their own (LongRunning): on the pool they would starve the
        // async work of this test and of the tests running beside it.
        var writers = Enumerable.Range(0, 2).Select(w => Task.Factory.StartNew(() =>
        {
            var random = new Random(w);
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    var id = $"orders/{random.Next(1, 3500):D8}";
                    if (random.Next(5) == 0)
                    {
                        env.Store.Delete(id);
                    }
                    else
                    {
                        env.Store.Put(id, $$"""{"customer":{"name":"writer {{w}}"},"status":"updated","total":{{random.Next(1000)}},"itemCount":3,"paid":true}""");
                    }

                    Interlocked.Increment(ref writes);
                    Thread.Sleep(1); // a busy database, not a bulk load: about a thousand writes a second
                }
                catch (Exception e)
                {
                    failures.Add(e);
                }
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default)).ToArray();
        var querier = Task.Factory.StartNew(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    var result = manager.Query("orders", new IndexQuery("status:updated OR customer:writer") { Take = 5 });
                    var all = manager.Query("orders", _all);
                    if (all.TotalHits < 1000)
                    {
                        failures.Add(new InvalidOperationException($"a query saw {all.TotalHits} documents: an empty or partial index served"));
                    }

                    Interlocked.Increment(ref queries);
                }
                catch (Exception e)
                {
                    failures.Add(e);
                }
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

        await Task.Delay(200);
        var started = manager.CreateOrUpdate(ManagerEnvironment.V2);
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        await Task.Delay(300);
        await stop.CancelAsync();
        await Task.WhenAll([.. writers, querier]).WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(IndexPutResult.RebuildStarted, started);
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Empty(failures);
        Assert.True(queries > 10, $"only {queries} queries ran");
        Assert.True(writes > 10, $"only {writes} writes ran");
        var summary = manager.GetSummary("orders");
        Assert.Equal(2, summary.Generation);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, summary.DefinitionHash);
        Assert.Equal(["g000002"], env.GenerationDirectories("orders"));
        IndexTestWait.Until(() => manager.GetSummary("orders").LagEtags == 0, "the new generation to catch up");
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(env.LiveDocuments(), report.StoreDocuments);
        Assert.Equal(report.StoreDocuments, manager.Query("orders", _all).TotalHits);
        Assert.True(manager.Query("orders", new IndexQuery("paid:true")).TotalHits > 0, "the new definition's fields are indexed");
    }

    [Fact]
    public async Task StartRebuild_WhileOneRuns_IsRefusedNamingIt()
    {
        using var release = new ManualResetEventSlim();
        var hold = 0;
        using var env = new ManagerEnvironment(documents: 500);
        var manager = env.OpenManager(ManagerEnvironment.FastOptions((_, point) =>
        {
            if (point == RebuildPoint.BulkStarted && Volatile.Read(ref hold) == 1)
            {
                release.Wait(TimeSpan.FromSeconds(30));
            }
        }));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref hold, 1);

        manager.StartRebuild("orders");
        var error = Assert.Throws<RebuildConflictException>(() => manager.StartRebuild("orders"));
        var changed = Assert.Throws<RebuildConflictException>(() => manager.CreateOrUpdate(ManagerEnvironment.V2));
        release.Set();
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Contains("'orders'", error.Message, StringComparison.Ordinal);
        Assert.Contains("already running", error.Message, StringComparison.Ordinal);
        Assert.Equal("orders", changed.IndexName);
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Equal(2, manager.GetSummary("orders").Generation);
    }

    [Fact]
    public async Task Cancel_MidBulk_LeavesTheOldIndexAndRemovesTheReplacement()
    {
        using var reached = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var hold = 0;
        using var env = new ManagerEnvironment(documents: 2000);
        var manager = env.OpenManager(ManagerEnvironment.FastOptions((_, point) =>
        {
            if (point == RebuildPoint.BulkBatchTaken && Volatile.Read(ref hold) == 1)
            {
                reached.Set();
                release.Wait(TimeSpan.FromSeconds(30));
            }
        }));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        var before = manager.GetSummary("orders");
        Volatile.Write(ref hold, 1);

        manager.CreateOrUpdate(ManagerEnvironment.V2);
        Assert.True(reached.Wait(TimeSpan.FromSeconds(30)));
        Assert.Equal(["g000001", "g000002"], env.GenerationDirectories("orders"));
        var cancelling = manager.CancelRebuildAsync("orders");
        release.Set();
        var cancelled = await cancelling.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(RebuildPhase.Cancelled, cancelled.Phase);
        Assert.Equal(["g000001"], env.GenerationDirectories("orders"));
        var after = manager.GetSummary("orders");
        Assert.Equal(1, after.Generation);
        Assert.Equal(before.DefinitionHash, after.DefinitionHash);
        Assert.Equal(before.Status.DocumentCount, after.Status.DocumentCount);
        Assert.Equal(RebuildPhase.Cancelled, after.LastRebuild!.Phase);
        Assert.True(manager.Verify("orders").IsConsistent);
        await Assert.ThrowsAsync<InvalidOperationException>(() => manager.CancelRebuildAsync("orders"));
    }

    [Fact]
    public async Task RebuildFailure_KeepsTheOldIndexServing_AndSaysWhy()
    {
        var fail = 0;
        using var env = new ManagerEnvironment(documents: 300);
        var manager = env.OpenManager(ManagerEnvironment.FastOptions((_, point) =>
        {
            if (point == RebuildPoint.SwapPersisted && Volatile.Read(ref fail) == 1)
            {
                throw new IOException("disk full (injected)");
            }
        }));

        await env.AssertFailedRebuildKeepsTheOldGenerationAsync(manager, () => Volatile.Write(ref fail, 1), "disk full (injected)", documents: 300);
    }

    [Fact]
    public async Task Reopen_WithARebuildInProgress_ResumesIt()
    {
        using var env = new ManagerEnvironment(documents: 800);
        var stopAt = 0;
        using var reached = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var manager = env.OpenManager(ManagerEnvironment.FastOptions((_, point) =>
        {
            if (point == RebuildPoint.CatchUpPersisted && Interlocked.Exchange(ref stopAt, 0) == 1)
            {
                reached.Set();
                release.Wait(TimeSpan.FromSeconds(30));
            }
        }));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref stopAt, 1);
        manager.CreateOrUpdate(ManagerEnvironment.V2);
        Assert.True(reached.Wait(TimeSpan.FromSeconds(30)));

        // Shut down while the rebuild stands between its bulk and catch-up phases.
        var closing = env.CloseManagerAsync();
        release.Set();
        await closing.WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(["g000001", "g000002"], env.GenerationDirectories("orders"));

        manager = env.OpenManager();
        var resumed = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Done, resumed.Phase);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, manager.GetSummary("orders").DefinitionHash);
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    [Theory]
    [InlineData("")]
    [InlineData("..")]
    [InlineData("a/b")]
    [InlineData("Orders")]
    [InlineData("../etc")]
    public async Task BadIndexNames_AreRefusedBeforeAnyLookup(string name)
    {
        using var env = new ManagerEnvironment(documents: 0);
        var manager = env.OpenManager();

        var error = Assert.Throws<ArgumentException>(() => manager.Query(name, _all));

        Assert.Contains("index name", error.Message, StringComparison.Ordinal);
        await Task.CompletedTask;
    }

    [Fact]
    public void UnknownIndex_IsNotFoundNamingIt()
    {
        using var env = new ManagerEnvironment(documents: 0);
        var manager = env.OpenManager();

        var error = Assert.Throws<IndexNotFoundException>(() => manager.GetSummary("nothing-here"));

        Assert.Contains("'nothing-here'", error.Message, StringComparison.Ordinal);
    }
}

internal static class IndexTestWait
{
    public static void Until(Func<bool> condition, string what) =>
        Index.IndexTestEnvironment.WaitUntil(condition, TimeSpan.FromSeconds(30), what);
}
