using System.Collections.Concurrent;

namespace Indexing.Indexer.Tests.SideBySide;

/// <summary>
/// The manager's verify against a following index under writes: it never pauses following, its
/// verdict stays right while documents change under it, and one runs at a time per index.
/// </summary>
public sealed class VerifyWhileFollowingTests
{
    [Fact]
    public async Task Verify_UnderWrites_NeverPausesFollowingAndFindsNothingWrong()
    {
        using var env = new ManagerEnvironment(documents: 6000);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        using var stop = new CancellationTokenSource();
        var failures = new ConcurrentBag<Exception>();
        var states = new ConcurrentDictionary<IndexState, int>();
        var writer = Task.Factory.StartNew(() => Write(env, stop.Token, failures), TaskCreationOptions.LongRunning);
        var watcher = Task.Factory.StartNew(
            () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    states.AddOrUpdate(manager.GetSummary("orders").Status.State, 1, (_, n) => n + 1);
                    Thread.Sleep(1);
                }
            },
            TaskCreationOptions.LongRunning);
        var reports = new List<VerifyReport>();
        try
        {
            for (var i = 0; i < 5; i++)
            {
                reports.Add(manager.Verify("orders"));
            }
        }
        finally
        {
            await stop.CancelAsync();
            await Task.WhenAll(writer, watcher).WaitAsync(TimeSpan.FromSeconds(30));
        }

        Assert.Empty(failures);
        Assert.All(reports, report => Assert.True(report.IsConsistent, report.ToString()));
        Assert.All(reports, report => Assert.True(report.StoreDocuments > 5000, report.ToString()));
        // Before: following paused while verify read the index's entries (the watcher saw Paused).
        Assert.Equal([IndexState.Following], states.Keys);
        IndexTestWait.Until(() => manager.GetSummary("orders").Status.AppliedEtag == env.Store.LastEtag, "the index to catch up after the writes");
        var settled = manager.Verify("orders");
        Assert.True(settled.IsConsistent, settled.ToString());
        Assert.Equal(0, settled.ChangedDuringVerify);
        Assert.Equal(env.LiveDocuments(), settled.StoreDocuments);
    }

    [Fact]
    public async Task Verify_MidWalk_FollowingAppliesNewWritesAndTheVerdictIgnoresThem()
    {
        using var env = new ManagerEnvironment(documents: 500);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        IndexTestWait.Until(() => manager.GetSummary("orders").Status.AppliedEtag == env.Store.LastEtag, "the index to catch up");

        var firstId = env.Store.ScanMetadata("orders").First().Id;
        var lastId = env.Store.ScanMetadata("orders").Last().Id;
        long written = 0;
        manager.VerifyStepHook = id =>
        {
            if (id != firstId)
            {
                return;
            }

            // Mid-walk, ahead of it and behind it: an update, a delete, a new document.
            env.Store.Put(lastId, """{"customer":{"name":"Late Writer"},"status":"late","total":2}""");
            env.Store.Delete(firstId);
            written = env.Store.Put("orders/zzz-new", """{"customer":{"name":"New Writer"},"status":"new","total":3}""");
            IndexTestWait.Until(() => manager.GetSummary("orders").Status.AppliedEtag >= written, "following to apply writes made while verify runs");
        };

        var report = manager.Verify("orders");
        manager.VerifyStepHook = null;

        Assert.True(report.IsConsistent, report.ToString());
        Assert.True(report.StoreEtag < written, $"the snapshot is at {report.StoreEtag}, after the writes at {written}");
        Assert.Equal(500, report.StoreDocuments);
        IndexTestWait.Until(() => manager.Query("orders", new IndexQuery("status:new")).TotalHits == 1, "the new document to be queryable");
        var after = manager.Verify("orders");
        Assert.True(after.IsConsistent, after.ToString());
        Assert.Equal(500, after.StoreDocuments);
    }

    [Fact]
    public async Task Verify_WhileAnotherRuns_RefusedAndTheFirstReports()
    {
        using var env = new ManagerEnvironment(documents: 200);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        using var started = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        manager.VerifyStartedHook = _ =>
        {
            started.Set();
            Assert.True(release.Wait(TimeSpan.FromSeconds(30)), "the test never released the first verify");
        };
        var first = Task.Factory.StartNew(() => manager.Verify("orders"), TaskCreationOptions.LongRunning);
        Assert.True(started.Wait(TimeSpan.FromSeconds(30)), "the first verify never started");
        manager.VerifyStartedHook = null;

        var refused = Assert.Throws<VerifyConflictException>(() => manager.Verify("orders"));
        release.Set();
        var report = await first.WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Contains("a verify of index 'orders' is already running", refused.Message, StringComparison.Ordinal);
        Assert.True(report.IsConsistent, report.ToString());
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    // Updates, deletes and new documents as fast as the store takes them, until stopped.
    private static void Write(ManagerEnvironment env, CancellationToken stop, ConcurrentBag<Exception> failures)
    {
        var random = new Random(7);
        var created = 0;
        while (!stop.IsCancellationRequested)
        {
            try
            {
                var roll = random.Next(10);
                if (roll == 0)
                {
                    env.Store.Delete($"orders/{random.Next(1, 6000):D8}");
                }
                else if (roll == 1)
                {
                    env.Store.Put($"orders/new-{created++:D6}", """{"customer":{"name":"New"},"status":"new","total":1}""");
                }
                else
                {
                    env.Store.Put($"orders/{random.Next(1, 6000):D8}", $$"""{"customer":{"name":"Writer"},"status":"updated","total":{{random.Next(1000)}}}""");
                }
            }
            catch (Exception e)
            {
                failures.Add(e);
                return;
            }
        }
    }
}
