using System.Collections.Concurrent;
using Indexing.Prefetcher;
using Microsoft.Extensions.Options;

namespace Indexing.Indexer.Tests.SideBySide;

// Indexes:MaxConcurrentRebuilds: past the limit a rebuild waits in phase Queued, first come first
// served, reading nothing, and every way a rebuild ends or is stopped (done, cancel, delete, close)
// frees its place. Real store and Lucene; the first rebuild is held at a RebuildPoint by the hook.
public sealed class RebuildQueueTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task LimitOne_TwoIndexesChanged_TheSecondIsQueuedUntilTheFirstSwitched_ThenBothAreDone()
    {
        using var env = new ManagerEnvironment(documents: 600);
        using var held = new Gate();
        var observer = new PhaseRecorder();
        var sources = new ConcurrentQueue<string>();
        var manager = env.OpenManager(LimitOne(held.Hook("a", RebuildPoint.BulkStarted)), observer, Recording(sources));
        await BuildAsync(manager, "a", "b");
        observer.Clear();
        sources.Clear();
        held.Arm();

        Assert.Equal(IndexPutResult.RebuildStarted, manager.CreateOrUpdate(V2("a")));
        held.WaitReached();
        Assert.Equal(IndexPutResult.RebuildStarted, manager.CreateOrUpdate(V2("b")));

        var queued = manager.GetRebuild("b")!;
        Assert.Equal(RebuildPhase.Queued, queued.Phase);
        Assert.Equal(1, queued.QueuePosition);
        Assert.False(queued.IsFinished);
        Assert.Equal(RebuildPhase.Queued, manager.GetSummary("b").Rebuild!.Phase);
        Assert.Equal(RebuildPhase.Bulk, manager.GetRebuild("a")!.Phase);
        Assert.Null(manager.GetRebuild("a")!.QueuePosition);
        // Queued is in progress: the same definition again is that rebuild, another one is refused.
        Assert.Equal(IndexPutResult.RebuildRunning, manager.CreateOrUpdate(V2("b")));
        var conflict = Assert.Throws<RebuildConflictException>(() => manager.StartRebuild("b"));
        Assert.Contains("already queued", conflict.Message, StringComparison.Ordinal);
        Assert.Contains("Indexes:MaxConcurrentRebuilds", conflict.Message, StringComparison.Ordinal);
        // Still queued a while later: nothing moves it but the first rebuild's end.
        await Task.Delay(300);
        Assert.Equal(RebuildPhase.Queued, manager.GetRebuild("b")!.Phase);
        Assert.Equal(["a"], sources);

        held.Release();
        var a = await ManagerEnvironment.WaitForRebuildAsync(manager, "a");
        var b = await ManagerEnvironment.WaitForRebuildAsync(manager, "b");

        Assert.Equal(RebuildPhase.Done, a.Phase);
        Assert.Equal(RebuildPhase.Done, b.Phase);
        Assert.Null(b.QueuePosition);
        Assert.True(b.PhaseTimes.ContainsKey(RebuildPhase.Queued));
        Assert.False(a.PhaseTimes.ContainsKey(RebuildPhase.Queued));
        Assert.Equal(["a", "b"], sources);
        // Only the one that waited passed through Queued, and it started its bulk phase only once
        // the first had reached its swap (the slot is freed at the catalog switch).
        Assert.Equal([RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], observer.Of("a"));
        Assert.Equal([RebuildPhase.Queued, RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], observer.Of("b"));
        Assert.True(observer.IndexOf("b", RebuildPhase.Bulk) > observer.IndexOf("a", RebuildPhase.Swapping), string.Join(", ", observer.All));
        env.AssertRebuiltWithV2(manager, "a", "b");
    }

    [Fact]
    public async Task CancelQueued_EndsCancelled_WithoutEverStartingAPrefetch_AndTheIndexCanBeRebuiltAgain()
    {
        using var env = new ManagerEnvironment(documents: 400);
        using var held = new Gate();
        var sources = new ConcurrentQueue<string>();
        var manager = env.OpenManager(LimitOne(held.Hook("a", RebuildPoint.BulkStarted)), bulkSources: Recording(sources));
        await BuildAsync(manager, "a", "b");
        var before = manager.GetSummary("b");
        sources.Clear();
        held.Arm();

        manager.StartRebuild("a");
        held.WaitReached();
        Assert.Equal(RebuildPhase.Queued, manager.StartRebuild("b").Phase);
        var cancelled = await manager.CancelRebuildAsync("b").WaitAsync(HangGuard);

        Assert.Equal(RebuildPhase.Cancelled, cancelled.Phase);
        Assert.Null(cancelled.QueuePosition);
        Assert.Equal(["a"], sources);
        Assert.Equal(["g000001"], env.GenerationDirectories("b"));
        var after = manager.GetSummary("b");
        Assert.Equal(1, after.Generation);
        Assert.Equal(before.Status.DocumentCount, after.Status.DocumentCount);
        Assert.Equal(RebuildPhase.Cancelled, after.LastRebuild!.Phase);
        Assert.Equal(RebuildPhase.Bulk, manager.GetRebuild("a")!.Phase);

        held.Release();
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "a")).Phase);
        // The cancelled one left the queue: a new rebuild of it gets the slot the first one freed.
        manager.StartRebuild("b");
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "b")).Phase);
        Assert.Equal(["a", "b"], sources);
        Assert.True(manager.Verify("b").IsConsistent);
    }

    [Fact]
    public async Task DeleteIndex_WhoseRebuildIsQueued_DeletesIt_AndTheQueueMovesUp()
    {
        using var env = new ManagerEnvironment(documents: 400);
        using var held = new Gate();
        var sources = new ConcurrentQueue<string>();
        var manager = env.OpenManager(LimitOne(held.Hook("a", RebuildPoint.BulkStarted)), bulkSources: Recording(sources));
        await BuildAsync(manager, "a", "b", "c");
        sources.Clear();
        held.Arm();

        manager.StartRebuild("a");
        held.WaitReached();
        manager.StartRebuild("b");
        manager.StartRebuild("c");
        Assert.Equal(1, manager.GetRebuild("b")!.QueuePosition);
        Assert.Equal(2, manager.GetRebuild("c")!.QueuePosition);

        var deleted = await manager.DeleteAsync("b").WaitAsync(HangGuard);

        Assert.Equal(RebuildPhase.Cancelled, deleted.Rebuild!.Phase);
        Assert.Null(deleted.Note);
        Assert.Equal(["a", "c"], manager.Names);
        Assert.False(Directory.Exists(Path.Combine(env.IndexRoot, "b")));
        Assert.Equal(RebuildPhase.Queued, manager.GetRebuild("c")!.Phase);
        Assert.Equal(1, manager.GetRebuild("c")!.QueuePosition);

        held.Release();
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "a")).Phase);
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "c")).Phase);
        Assert.Equal(["a", "c"], sources);
        Assert.True(manager.Verify("c").IsConsistent);
    }

    [Fact]
    public async Task NewIndexes_PastTheLimit_QueueTheirFirstBuild_AndServeEmptyMeanwhile()
    {
        using var env = new ManagerEnvironment(documents: 300);
        using var held = new Gate();
        var observer = new PhaseRecorder();
        var manager = env.OpenManager(LimitOne(held.Hook("a", RebuildPoint.BulkStarted)), observer);
        held.Arm();

        Assert.Equal(IndexPutResult.Created, manager.CreateOrUpdate(V1("a")));
        held.WaitReached();
        Assert.Equal(IndexPutResult.Created, manager.CreateOrUpdate(V1("b")));

        Assert.Equal(RebuildPhase.Queued, manager.GetRebuild("b")!.Phase);
        Assert.Equal(0, manager.Query("b", new IndexQuery("*:*") { Take = 1 }).TotalHits);
        // A first build has no older generation to return to, queued or not.
        await Assert.ThrowsAsync<InvalidOperationException>(() => manager.CancelRebuildAsync("b"));

        held.Release();
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "b")).Phase);
        Assert.Equal([RebuildPhase.Queued, RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], observer.Of("b"));
        Assert.DoesNotContain(RebuildPhase.Queued, observer.Of("a"));
        Assert.Equal(env.LiveDocuments(), manager.Query("b", new IndexQuery("*:*") { Take = 1 }).TotalHits);
        Assert.True(manager.Verify("b").IsConsistent);
    }

    [Fact]
    public async Task Close_WithRebuildsQueued_DoesNotHang_AndReopenWithLimitOneResumesBoth_OneAfterTheOther()
    {
        using var env = new ManagerEnvironment(documents: 600);
        using var held = new Gate();
        var manager = env.OpenManager(LimitOne(held.Hook("a", RebuildPoint.BulkStarted)));
        await BuildAsync(manager, "a", "b");
        held.Arm();
        manager.CreateOrUpdate(V2("a"));
        held.WaitReached();
        manager.CreateOrUpdate(V2("b"));
        Assert.Equal(RebuildPhase.Queued, manager.GetRebuild("b")!.Phase);

        // Closing stops the running one (released from its hold) and the queued one; both intents stay.
        var closing = env.CloseManagerAsync();
        held.Release();
        await closing.WaitAsync(HangGuard);
        // A queued rebuild's intent was written before it queued: what a crash there would leave too.
        var intents = IndexCatalog.Load(env.IndexRoot).State.Indexes.ToDictionary(e => e.Key, e => e.Value.Rebuild);
        Assert.Equal(RebuildPhase.Bulk, intents["a"]!.Phase);
        Assert.Equal(RebuildPhase.Bulk, intents["b"]!.Phase);
        Assert.Equal(2, intents["b"]!.Generation);
        Assert.Equal(["g000001", "g000002"], env.GenerationDirectories("a"));

        var observer = new PhaseRecorder();
        var sources = new ConcurrentQueue<string>();
        manager = env.OpenManager(LimitOne(), observer, Recording(sources));
        var a = await ManagerEnvironment.WaitForRebuildAsync(manager, "a");
        var b = await ManagerEnvironment.WaitForRebuildAsync(manager, "b");

        Assert.Equal(RebuildPhase.Done, a.Phase);
        Assert.Equal(RebuildPhase.Done, b.Phase);
        // In catalog order: "a" takes the one slot, "b" waits for it.
        Assert.Equal(["a", "b"], sources);
        Assert.DoesNotContain(RebuildPhase.Queued, observer.Of("a"));
        Assert.Equal(RebuildPhase.Queued, observer.Of("b")[0]);
        Assert.True(observer.IndexOf("b", RebuildPhase.Bulk) > observer.IndexOf("a", RebuildPhase.Swapping), string.Join(", ", observer.All));
        env.AssertRebuiltWithV2(manager, "a", "b");
    }

    [Fact]
    public async Task QueuedRebuild_ThatWillStartAfresh_HoldsNoTombstones_WhileItWaits()
    {
        using var env = new ManagerEnvironment(documents: 300);
        using var held = new Gate();
        var manager = env.OpenManager(LimitOne(held.Hook("a", RebuildPoint.CatchUpStep)));
        await BuildAsync(manager, "a", "b");
        held.Arm();

        manager.StartRebuild("a");
        held.WaitReached();
        manager.StartRebuild("b");
        Assert.Equal(RebuildPhase.Queued, manager.GetRebuild("b")!.Phase);
        // Every other hold is past 0 (a's replacement at its snapshot, the serving generations at
        // their commits); b's empty replacement would hold 0 if a queued run held its ResumeEtag.
        var watermark = manager.TombstoneWatermark();
        // Deletes while b waits, and a purge round over them: whatever it takes, b's replacement
        // starts from a snapshot after it and must end without the deleted documents.
        foreach (var id in env.Store.ScanMetadata("orders").Select(m => m.Id).Take(50).ToList())
        {
            env.Store.Delete(id);
        }

        env.Store.PurgeTombstones();

        held.Release();
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "a")).Phase);
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "b")).Phase);
        Assert.True(watermark > 0, $"the watermark was {watermark} while b waited");
        var report = manager.Verify("b");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(env.LiveDocuments(), report.IndexDocuments);
        Assert.True(manager.Verify("a").IsConsistent);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(65)]
    public void Open_WithMaxConcurrentRebuildsOutOfRange_IsRefusedNamingTheSetting(int value)
    {
        using var env = new ManagerEnvironment(documents: 0);

        var error = Assert.Throws<OptionsValidationException>(() =>
            env.OpenManager(new IndexManagerOptions { Index = new IndexOptions { MaxConcurrentRebuilds = value } }));

        Assert.Contains($"Indexes:MaxConcurrentRebuilds is {value}; it must be from 1 to 64", error.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(env.IndexRoot));
    }

    [Fact]
    public async Task LimitOne_TheSlotIsFreedAtTheCatalogSwitch_NotOnceTheOldGenerationDrained()
    {
        using var env = new ManagerEnvironment(documents: 300);
        using var queryHeld = new ManualResetEventSlim();
        using var releaseQuery = new ManualResetEventSlim();
        var hold = 0;
        var limitOne = LimitOne();
        var manager = env.OpenManager(limitOne with
        {
            // The swap waits this long for a query still on the old generation: far longer than the test.
            Index = limitOne.Index with { DrainTimeout = HangGuard },
            QueryHook = (name, generation) =>
            {
                if (name == "a" && generation == 1 && Interlocked.Exchange(ref hold, 0) == 1)
                {
                    queryHeld.Set();
                    releaseQuery.Wait(HangGuard);
                }
            },
        });
        await BuildAsync(manager, "a", "b");
        Volatile.Write(ref hold, 1);
        var query = Task.Run(() => manager.Query("a", new IndexQuery("*:*")));
        Assert.True(queryHeld.Wait(HangGuard), "the query never reached its hook");

        manager.CreateOrUpdate(V2("a"));
        manager.CreateOrUpdate(V2("b"));
        Assert.Equal(RebuildPhase.Queued, manager.GetRebuild("b")!.Phase);

        // a switches, then drains its old generation, which the held query keeps: b starts meanwhile.
        IndexTestWait.Until(() => manager.GetRebuild("b")!.Phase != RebuildPhase.Queued, "b to leave the queue while a drains");
        var a = manager.GetRebuild("a")!;
        Assert.False(a.IsFinished, $"a ended ({a.Phase}) before b was admitted: the slot waited for the drain");
        Assert.Equal(RebuildPhase.Swapping, a.Phase);

        releaseQuery.Set();
        Assert.Equal(300, (await query.WaitAsync(HangGuard)).TotalHits);
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "a")).Phase);
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "b")).Phase);
        Assert.True(manager.Verify("a").IsConsistent);
        Assert.True(manager.Verify("b").IsConsistent);
    }

    // Each index serves generation 2 with V2, its only directory, holding every live document.
    private static IndexManagerOptions LimitOne(Action<string, RebuildPoint>? hook = null)
    {
        var options = ManagerEnvironment.FastOptions(hook);
        return options with { Index = options.Index with { MaxConcurrentRebuilds = 1 } };
    }

    private static IndexDefinition V1(string name) => ManagerEnvironment.Named(ManagerEnvironment.V1Json, name);

    private static IndexDefinition V2(string name) => ManagerEnvironment.Named(ManagerEnvironment.V2Json, name);

    // Defines each index with V1 and waits for its first build (they queue too, one slot).
    private static async Task BuildAsync(IndexManager manager, params string[] names)
    {
        foreach (var name in names)
        {
            manager.CreateOrUpdate(V1(name));
        }

        foreach (var name in names)
        {
            Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, name)).Phase);
        }
    }

    // The adaptive source, recording which index each bulk phase read for.
    private static BulkSourceFactory Recording(ConcurrentQueue<string> names) => (request, cancellationToken) =>
    {
        names.Enqueue(request.IndexName);
        return ManagerEnvironment.AdaptiveSource(request, cancellationToken);
    };

    // Holds one index's rebuild at one point once armed, until released.
    private sealed class Gate : IDisposable
    {
        private readonly ManualResetEventSlim _reached = new();
        private readonly ManualResetEventSlim _release = new();
        private int _armed;

        public Action<string, RebuildPoint> Hook(string index, RebuildPoint at) => (name, point) =>
        {
            if (name == index && point == at && Interlocked.Exchange(ref _armed, 0) == 1)
            {
                _reached.Set();
                _release.Wait(HangGuard);
            }
        };

        public void Arm() => Volatile.Write(ref _armed, 1);

        public void WaitReached() => Assert.True(_reached.Wait(HangGuard), "the held rebuild never reached its point");

        public void Release() => _release.Set();

        public void Dispose()
        {
            _release.Set();
            _reached.Dispose();
            _release.Dispose();
        }
    }

    // Every phase the manager reports, in the order reported.
    private sealed class PhaseRecorder : IRebuildObserver
    {
        private readonly List<(string Index, RebuildPhase Phase)> _phases = [];

        public IReadOnlyList<string> All
        {
            get
            {
                lock (_phases)
                {
                    return [.. _phases.Select(p => $"{p.Index} {p.Phase}")];
                }
            }
        }

        public IDisposable? BulkStarted(string indexName, IBatchSource source) => null;

        public void PhaseEntered(string indexName, RebuildPhase phase)
        {
            lock (_phases)
            {
                _phases.Add((indexName, phase));
            }
        }

        public void Clear()
        {
            lock (_phases)
            {
                _phases.Clear();
            }
        }

        public List<RebuildPhase> Of(string index)
        {
            lock (_phases)
            {
                return [.. _phases.Where(p => p.Index == index).Select(p => p.Phase)];
            }
        }

        public int IndexOf(string index, RebuildPhase phase)
        {
            lock (_phases)
            {
                return _phases.IndexOf((index, phase));
            }
        }
    }
}
