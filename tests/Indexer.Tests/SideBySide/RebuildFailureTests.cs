using System.Collections.Concurrent;

namespace Indexing.Indexer.Tests.SideBySide;

// Failures on each side of the rebuild's commit point (the catalog switch), failures of the
// failure handling itself, and what queries see across the swap.
public sealed class RebuildFailureTests
{
    private static readonly IndexQuery _all = new("*:*") { Take = 1 };
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData(nameof(RebuildPoint.CatalogSwitched))]
    [InlineData(nameof(RebuildPoint.OldDrained))]
    public async Task FailureAfterTheSwitch_TheRebuildEndsDone_TheNewGenerationServesAndFollows(string pointName)
    {
        var point = Enum.Parse<RebuildPoint>(pointName);
        var armed = 0;
        using var env = new ManagerEnvironment(documents: 300);
        var manager = env.OpenManager(ManagerEnvironment.FastOptions((_, reached) =>
        {
            if (reached == point && Interlocked.Exchange(ref armed, 0) == 1)
            {
                throw new IOException($"injected at {reached}: no space left on device");
            }
        }));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref armed, 1);

        manager.CreateOrUpdate(ManagerEnvironment.V2);
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(0, Volatile.Read(ref armed));
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Contains($"injected at {pointName}", done.Note, StringComparison.Ordinal);
        AssertServesAndFollows(env, manager);
        var last = manager.GetSummary("orders").LastRebuild!;
        Assert.Equal(RebuildPhase.Done, last.Phase);
        Assert.Contains($"injected at {pointName}", last.Note, StringComparison.Ordinal);
        if (point == RebuildPoint.OldDrained)
        {
            // Closed, but its delete never ran: the directory waits for the next open.
            Assert.Contains("deleted at the next start", done.Note, StringComparison.Ordinal);
            Assert.Equal(["g000001", "g000002"], env.GenerationDirectories("orders"));
        }

        // Whatever the old generation's cleanup left behind goes at the next open.
        await env.CloseManagerAsync();
        manager = env.OpenManager();
        Assert.Equal(["g000002"], env.GenerationDirectories("orders"));
        Assert.Equal(2, manager.GetSummary("orders").Generation);
        Assert.Equal(301, manager.Query("orders", _all).TotalHits);
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    [Fact]
    public async Task StartFollowingFailsAfterTheSwitch_TheRebuildEndsDone_AndTheNewGenerationStillComesToFollow()
    {
        var armed = 0;
        using var env = new ManagerEnvironment(documents: 300);
        var options = ManagerEnvironment.FastOptions();
        options = options with
        {
            Index = options.Index with
            {
                StartFollowingHook = index =>
                {
                    if (index.Directory.EndsWith("g000002", StringComparison.Ordinal) && Interlocked.Exchange(ref armed, 0) == 1)
                    {
                        throw new IOException("injected in StartFollowing");
                    }
                },
            },
        };
        var manager = env.OpenManager(options);
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref armed, 1);

        manager.CreateOrUpdate(ManagerEnvironment.V2);
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(0, Volatile.Read(ref armed));
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Contains("injected in StartFollowing", done.Note, StringComparison.Ordinal);
        AssertServesAndFollows(env, manager);
        IndexTestWait.Until(() => env.GenerationDirectories("orders").SequenceEqual(["g000002"]), "the old generation to be deleted");
    }

    [Fact]
    public async Task AbandonCannotWriteTheCatalog_TheRunEndsFailed_AndANewRebuildCanStart()
    {
        var failRebuild = 0;
        var failCatalog = 0;
        using var env = new ManagerEnvironment(documents: 300);
        var options = ManagerEnvironment.FastOptions((_, point) =>
        {
            if (point == RebuildPoint.SwapPersisted && Interlocked.Exchange(ref failRebuild, 0) == 1)
            {
                // The disk is full: the rebuild fails, and so does the catalog write that abandons it.
                Volatile.Write(ref failCatalog, 1);
                throw new IOException("disk full (injected)");
            }
        }) with
        {
            CatalogHook = _ =>
            {
                if (Volatile.Read(ref failCatalog) == 1)
                {
                    throw new IOException("catalog write: no space left on device (injected)");
                }
            },
        };
        var manager = env.OpenManager(options);
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref failRebuild, 1);

        manager.CreateOrUpdate(ManagerEnvironment.V2);
        var failed = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Failed, failed.Phase);
        Assert.Contains("disk full (injected)", failed.Error, StringComparison.Ordinal);
        Assert.Contains("catalog write: no space left on device (injected)", failed.Error, StringComparison.Ordinal);
        Assert.Equal(1, manager.GetSummary("orders").Generation);
        Assert.Equal(300, manager.Query("orders", _all).TotalHits);

        // Space is back: the next rebuild is not refused, and it completes.
        Volatile.Write(ref failCatalog, 0);
        manager.StartRebuild("orders", ManagerEnvironment.V2);
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, manager.GetSummary("orders").DefinitionHash);
        Assert.True(manager.Verify("orders").IsConsistent);

        await env.CloseManagerAsync();
        manager = env.OpenManager();
        Assert.Equal([$"g{manager.GetSummary("orders").Generation:D6}"], env.GenerationDirectories("orders"));
        Assert.Null(manager.GetRebuild("orders"));
    }

    [Fact]
    public async Task Swap_AWriteQueriesSawOnTheOldGeneration_IsVisibleOnTheNewOne()
    {
        var armed = 0;
        long confirmed = 0;
        long checks = 0;
        var violations = new ConcurrentQueue<string>();
        using var env = new ManagerEnvironment(documents: 300);
        var manager = env.OpenManager(ManagerEnvironment.FastOptions((_, point) =>
        {
            if (Volatile.Read(ref armed) != 1)
            {
                return;
            }

            if (point == RebuildPoint.SwapCommitted)
            {
                // The replacement has caught up and committed; the writes the reader sees from now on
                // were applied by the old generation after that.
                var target = Interlocked.Read(ref confirmed) + 3;
                IndexTestWait.Until(() => Interlocked.Read(ref confirmed) >= target, "the reader to see 3 more writes on the old generation");
            }
            else if (point == RebuildPoint.CatalogSwitched)
            {
                // New queries go to the new generation now: let the reader check it a few times.
                var target = Interlocked.Read(ref checks) + 5;
                IndexTestWait.Until(() => Interlocked.Read(ref checks) >= target, "the reader to query the new generation");
            }
        }));
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        using var stop = new CancellationTokenSource();
        // One client that writes, then reads until it sees its own write: what it has seen once must
        // stay visible.
        var reader = Task.Factory.StartNew(
            () =>
            {
                for (var i = 0; !stop.IsCancellationRequested; i++)
                {
                    env.Store.Put($"orders/probe-{i:D5}", $$"""{"customer":{"name":"probe"},"status":"probe","total":{{i}}}""");
                    while (!stop.IsCancellationRequested)
                    {
                        var seen = manager.Query("orders", new IndexQuery("status:probe") { Take = 1 }).TotalHits;
                        Interlocked.Increment(ref checks);
                        var before = Interlocked.Read(ref confirmed);
                        if (seen < before)
                        {
                            violations.Enqueue($"{before} probes were visible, then a query saw {seen} (generation {manager.GetSummary("orders").Generation})");
                        }

                        if (seen >= i + 1)
                        {
                            Interlocked.Exchange(ref confirmed, i + 1);
                            break;
                        }

                        Thread.Sleep(2);
                    }
                }
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);
        IndexTestWait.Until(() => Interlocked.Read(ref confirmed) >= 3, "the reader to see its first writes");
        Volatile.Write(ref armed, 1);

        manager.CreateOrUpdate(ManagerEnvironment.V2);
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        var after = Interlocked.Read(ref confirmed) + 3;
        IndexTestWait.Until(() => Interlocked.Read(ref confirmed) >= after, "the reader to go on after the swap");
        await stop.CancelAsync();
        await reader.WaitAsync(_hangGuard);

        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Equal(2, manager.GetSummary("orders").Generation);
        Assert.Empty(violations);
    }

    [Fact]
    public async Task DrainTimeout_AQueryStillRunsOnTheOldGeneration_ItIsClosedOnlyWhenTheQueryEnds()
    {
        using var held = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var hold = 0;
        using var env = new ManagerEnvironment(documents: 300);
        var fast = ManagerEnvironment.FastOptions();
        var manager = env.OpenManager(fast with
        {
            Index = fast.Index with { DrainTimeout = TimeSpan.FromMilliseconds(200) },
            QueryHook = (_, generation) =>
            {
                if (generation == 1 && Interlocked.Exchange(ref hold, 0) == 1)
                {
                    held.Set();
                    release.Wait(TimeSpan.FromSeconds(60));
                }
            },
        });
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref hold, 1);
        var query = Task.Factory.StartNew(
            () => manager.Query("orders", new IndexQuery("*:*") { Take = 10 }), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        Assert.True(held.Wait(_hangGuard), "the query did not reach the hook");

        manager.CreateOrUpdate(ManagerEnvironment.V2);
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        // The rebuild is over and says why generation 1 is still there: a query runs on it.
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Contains("1 query", done.Note, StringComparison.Ordinal);
        Assert.Equal(["g000001", "g000002"], env.GenerationDirectories("orders"));
        Assert.Equal(2, manager.GetSummary("orders").Generation);

        release.Set();
        var result = await query.WaitAsync(_hangGuard);
        Assert.Equal(300, result.TotalHits);
        Assert.Equal(10, result.Hits.Count);
        IndexTestWait.Until(() => env.GenerationDirectories("orders").SequenceEqual(["g000002"]), "the old generation to go once its last query ended");
    }

    // The new generation answers over the whole collection and applies a write made after the swap.
    [Fact]
    public async Task Swap_TheSwitchIsNotDurableAndTheNextCatalogWriteFails_TheGenerationTheCatalogNamesIsKept()
    {
        // Once armed (stage 0), the switch's catalog is renamed into place but its directory fsync
        // fails; every catalog write after that fails too (the disk is full).
        var stage = -1;
        using var env = new ManagerEnvironment(documents: 300);
        var options = ManagerEnvironment.FastOptions((_, point) =>
        {
            if (point == RebuildPoint.CatalogTempWritten)
            {
                Interlocked.CompareExchange(ref stage, 1, 0);
            }
        }) with
        {
            CatalogFileHook = (step, _) =>
            {
                if (step == AtomicFileStep.SyncDirectory && Interlocked.CompareExchange(ref stage, 2, 1) == 1)
                {
                    throw new IOException("fsync: input/output error (injected)");
                }

                if (step == AtomicFileStep.Write && Volatile.Read(ref stage) == 2)
                {
                    throw new IOException("catalog write: no space left on device (injected)");
                }
            },
        };
        var manager = env.OpenManager(options);
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Volatile.Write(ref stage, 0);

        manager.CreateOrUpdate(ManagerEnvironment.V2);
        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(2, Volatile.Read(ref stage));
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Contains("could not be made durable", done.Note, StringComparison.Ordinal);
        AssertServesAndFollows(env, manager);

        // A restart reads the catalog as it is on disk: the generation it names serves, whole.
        Volatile.Write(ref stage, 3);
        await env.CloseManagerAsync();
        manager = env.OpenManager();
        Assert.Equal(2, manager.GetSummary("orders").Generation);
        Assert.Equal(["g000002"], env.GenerationDirectories("orders"));
        Assert.Equal(301, manager.Query("orders", _all).TotalHits);
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    private static void AssertServesAndFollows(ManagerEnvironment env, IndexManager manager)
    {
        var summary = manager.GetSummary("orders");
        Assert.Equal(2, summary.Generation);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, summary.DefinitionHash);
        Assert.Equal(300, manager.Query("orders", _all).TotalHits);
        env.Store.Put("orders/after-swap", """{"customer":{"name":"After Swap"},"status":"after","total":2.5,"itemCount":1,"paid":true}""");
        IndexTestWait.Until(() => manager.Query("orders", new IndexQuery("status:after")).TotalHits == 1, "the new generation to apply a write made after the swap");
        Assert.Equal(301, manager.Query("orders", _all).TotalHits);
    }
}
