using Indexing.Prefetcher;

namespace Indexing.Indexer.Tests.SideBySide;

// What the manager is given instead of starting a prefetcher itself: the factory of the bulk phase's
// batch source, and the observer its host shows rebuilds with (the server's admin page).
public sealed class RebuildSourceTests
{
    private static readonly IndexQuery _all = new("*:*") { Take = 1 };

    [Fact]
    public async Task Rebuild_BulkPhase_ReadsTheFactorysSource_AndTheObserverHoldsItUntilTheBulkPhaseEnds()
    {
        using var env = new ManagerEnvironment(documents: 600);
        var requests = new List<BulkSourceRequest>();
        var started = new List<IBatchSource>();
        var observer = new RecordingObserver();
        bool? heldDuringBulk = null;
        var manager = env.OpenManager(
            ManagerEnvironment.FastOptions((_, point) =>
            {
                if (point == RebuildPoint.BulkBatchTaken)
                {
                    heldDuringBulk = observer.Held;
                }
            }),
            observer,
            (request, cancellationToken) =>
            {
                requests.Add(request);
                var source = ManagerEnvironment.AdaptiveSource(request, cancellationToken);
                started.Add(source);
                return source;
            });

        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        manager.CreateOrUpdate(ManagerEnvironment.V2);
        var rebuilt = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Done, rebuilt.Phase);
        Assert.Equal(2, requests.Count);
        Assert.All(requests, request => Assert.Equal(new BulkSourceRequest(env.Store, "orders", "orders"), request));
        Assert.Equal(["orders", "orders"], observer.Names);
        // The observer is handed the rebuild's reader of the shared pass over the factory's own source
        // (the engine rethrottles that as an adaptive PrefetchPipeline).
        Assert.Equal(started, observer.Sources.Select(source => Assert.IsType<SharedPass.Reader>(source).Pass.Source));
        Assert.Equal(PrefetchStrategy.Adaptive, Assert.IsType<PrefetchPipeline>(observer.Sources[1].Adaptive()).Strategy);
        Assert.True(heldDuringBulk);
        Assert.Equal(2, observer.Released);
        Assert.False(observer.Held);
        Assert.Equal(600, rebuilt.DocumentsDone);
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    [Fact]
    public async Task Progress_IndexingThreadsHeld_CountsHandedOutAheadOfIndexed_AndBothMeetWhenTheBulkPhaseEnds()
    {
        using var env = new ManagerEnvironment(documents: 600);
        using var release = new ManualResetEventSlim();
        var indexed = 0;
        var options = ManagerEnvironment.FastOptions() with
        {
            Index = ManagerEnvironment.FastOptions().Index with
            {
                TakeMaxDocuments = 50,
                // From the 100th document on every indexing thread waits until released: 99 are indexed,
                // and the takes handed out behind them wait.
                BuildDocumentHook = _ =>
                {
                    if (Interlocked.Increment(ref indexed) >= 100)
                    {
                        release.Wait(TimeSpan.FromMinutes(1));
                    }
                },
            },
        };
        var manager = env.OpenManager(options);

        RebuildProgress held;
        try
        {
            manager.CreateOrUpdate(ManagerEnvironment.V1);
            // Both counts are published on their own schedules: wait until each has reached the hold.
            IndexTestWait.Until(
                () => manager.GetRebuild("orders") is { DocumentsDone: >= 110, DocumentsIndexed: >= 99 },
                "takes to be handed out past the held ones, and the 99 before them indexed");
            held = manager.GetRebuild("orders")!;
        }
        finally
        {
            release.Set();
        }

        var done = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Bulk, held.Phase);
        Assert.Equal(99, held.DocumentsIndexed);
        Assert.InRange(held.BytesIndexed, 1, held.BytesDone - 1);
        Assert.Equal(RebuildPhase.Done, done.Phase);
        Assert.Equal((600, 600), (done.DocumentsDone, done.DocumentsIndexed));
        Assert.Equal(done.BytesDone, done.BytesIndexed);
    }

    [Fact]
    public async Task Rebuild_FromAnotherKindOfSource_BuildsTheSameIndex()
    {
        using var env = new ManagerEnvironment(documents: 400);
        var manager = env.OpenManager(bulkSources: static (request, cancellationToken) =>
            Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Sequential, cancellationToken: cancellationToken));

        manager.CreateOrUpdate(ManagerEnvironment.V1);
        var built = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Done, built.Phase);
        Assert.Equal(400, built.DocumentsDone);
        Assert.Equal(400, manager.Query("orders", _all).TotalHits);
        Assert.True(manager.Verify("orders").IsConsistent);
    }

    [Fact]
    public async Task Rebuild_TheFactoryFails_TheRebuildFailsSayingWhy_AndTheOldGenerationServes()
    {
        var fail = 0;
        using var env = new ManagerEnvironment(documents: 300);
        var manager = env.OpenManager(bulkSources: (request, cancellationToken) =>
            Volatile.Read(ref fail) == 1
                ? throw new IOException("no snapshot today (injected)")
                : ManagerEnvironment.AdaptiveSource(request, cancellationToken));

        await env.AssertFailedRebuildKeepsTheOldGenerationAsync(manager, () => Volatile.Write(ref fail, 1), "no snapshot today (injected)", documents: 300);
    }

    [Fact]
    public void Open_WithoutABulkSourceFactory_IsRefused()
    {
        using var env = new ManagerEnvironment(documents: 0);

        var error = Assert.Throws<ArgumentNullException>(() => IndexManager.Open(env.IndexRoot, env.Store, null!));

        Assert.Equal("bulkSources", error.ParamName);
    }

    // Records what the manager tells it; each handle counts itself released once.
    private sealed class RecordingObserver : IRebuildObserver
    {
        private int _held;
        private int _released;

        public List<string> Names { get; } = [];

        public List<IBatchSource> Sources { get; } = [];

        public bool Held => Volatile.Read(ref _held) > 0;

        public int Released => Volatile.Read(ref _released);

        public IDisposable BulkStarted(string indexName, IBatchSource source)
        {
            Names.Add(indexName);
            Sources.Add(source);
            Interlocked.Increment(ref _held);
            return new Handle(this);
        }

        private sealed class Handle(RecordingObserver observer) : IDisposable
        {
            private int _disposed;

            public void Dispose()
            {
                if (Interlocked.Exchange(ref _disposed, 1) == 0)
                {
                    Interlocked.Decrement(ref observer._held);
                    Interlocked.Increment(ref observer._released);
                }
            }
        }
    }
}
