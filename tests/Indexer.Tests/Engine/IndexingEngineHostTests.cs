using Indexing.Datasets;
using Indexing.Engine;
using Indexing.Indexer.Tests.SideBySide;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer.Tests.Engine;

// What a host's admin surface reads through the engine's public API: the memory snapshot, the
// running prefetches by name and their live limits, and the start-up helpers.
public sealed class IndexingEngineHostTests
{
    [Fact]
    public async Task GetMemory_ReportsTheStoresCachesTheRebuildBudgetAndThePrefetchBytesHeld()
    {
        using var root = new TempDirectory("indexing-engine-host-tests");
        var storage = new StoreOptions(syncWrites: false, blockCacheBytes: 16 << 20, rowCacheBytes: 4 << 20);
        await using var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = root.Path, Storage = storage });
        engine.PutMany(Enumerable.Range(1, 50).Select(i => new DocumentWrite($"orders/{i:D4}", System.Text.Encoding.UTF8.GetBytes($$"""{"n":{{i}}}"""))));

        var memory = engine.GetMemory();

        Assert.Equal(16 << 20, memory.BlockCacheCapacityBytes);
        Assert.Equal(4 << 20, memory.RowCacheCapacityBytes);
        Assert.Equal(PrefetchOptions.DefaultBudgetBytes, memory.RebuildPrefetchBudgetBytes);
        Assert.True(memory.MemtableLimitBytes > 0);
        Assert.True(memory.MemtableBytes > 0, "fifty unflushed writes are in the memtables");
        Assert.Equal(0, memory.PrefetchHeldBytes);
        Assert.False(string.IsNullOrWhiteSpace(memory.Malloc));
        Assert.NotNull(memory.RocksDbLibraryPath);

        // An adaptive prefetch with no consumer fills its small budget and waits: what it holds of the
        // engine's one budget, the engine reports.
        await using var source = Prefetch.Start(engine.Store, "orders", PrefetchStrategy.Adaptive, engine.PrefetchOptions with { BudgetBytes = 1 << 10 });
        using (engine.Prefetches.Register("held", source))
        {
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
            long held, expected;
            do
            {
                await Task.Delay(20);
                var pressure = source.Pressure;
                expected = pressure.InFlightBytes + pressure.BufferedBytes;
                held = engine.GetMemory().PrefetchHeldBytes;
            }
            while ((held == 0 || held != expected) && DateTime.UtcNow < deadline);

            Assert.InRange(held, 1, 1 << 10);
            Assert.Equal(expected, held);
        }

        await engine.DisposeAsync();
        Assert.Throws<ObjectDisposedException>(() => engine.GetMemory());
    }

    [Fact]
    public async Task GetMemory_ReportsTheOneBudgetTheEnginesPrefetchesShare_AsConfigured()
    {
        using var root = new TempDirectory("indexing-engine-host-tests");
        var options = new EngineOptions
        {
            DataDirectory = root.Path,
            Storage = new StoreOptions(syncWrites: false),
            Indexes = new IndexOptions { PrefetchBudgetBytes = 32L << 20 },
        };
        await using var engine = IndexingEngine.Open(options);

        Assert.Equal(32L << 20, engine.GetMemory().RebuildPrefetchBudgetBytes);
        Assert.Equal(32L << 20, engine.PrefetchOptions.SharedBudget!.BudgetBytes);
        Assert.Equal(32L << 20, engine.PrefetchOptions.BudgetBytes);
        Assert.NotNull(engine.PrefetchOptions.Devices);
    }

    [Fact]
    public async Task Prefetches_ListedByName_AdaptiveLimitsChangeLive_FixedOnesAndUnknownNamesRefused()
    {
        using var root = new TempDirectory("indexing-engine-host-tests");
        await using var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = root.Path, Storage = new StoreOptions(syncWrites: false) });
        engine.PutMany(Enumerable.Range(1, 200).Select(i => new DocumentWrite($"orders/{i:D4}", System.Text.Encoding.UTF8.GetBytes($$"""{"n":{{i}}}"""))));
        Assert.Empty(engine.ListPrefetches());

        await using var adaptive = Prefetch.Start(engine.Store, "orders", PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 4 << 20 });
        await using var sequential = Prefetch.Start(engine.Store, "orders", PrefetchStrategy.Sequential);
        using (engine.Prefetches.Register("reader a", adaptive))
        using (engine.Prefetches.Register("reader b", sequential))
        {
            var listed = engine.ListPrefetches();
            Assert.Equal(["reader a", "reader b"], listed.Select(p => p.Name));
            Assert.Equal(4 << 20, listed[0].Limits!.BudgetBytes);
            Assert.Null(listed[1].Limits);
            Assert.Equal(sequential.Pressure.Strategy, listed[1].Strategy);

            var updated = engine.UpdatePrefetchLimits("reader a", listed[0].Limits! with { BudgetBytes = 2 << 20 });
            Assert.Equal("reader a", updated!.Name);
            Assert.Equal(2 << 20, updated.Limits!.BudgetBytes);
            Assert.Equal(2 << 20, engine.GetPrefetch("reader a")!.Limits!.BudgetBytes);

            var fixedOne = Assert.Throws<InvalidOperationException>(() => engine.UpdatePrefetchLimits("reader b", new PrefetchLimits { BudgetBytes = 2 << 20 }));
            Assert.Contains("adaptive", fixedOne.Message, StringComparison.Ordinal);
            Assert.Null(engine.GetPrefetch("reader c"));
            Assert.Null(engine.UpdatePrefetchLimits("reader c", new PrefetchLimits { BudgetBytes = 2 << 20 }));
        }

        Assert.Empty(engine.ListPrefetches());
    }

    // A rebuild's bulk prefetch leaves the running list when its bulk phase ends and stays listed as
    // finished, with the figures it ended with: every document taken, how it ended and when.
    [Fact]
    public async Task FinishedPrefetches_ARebuildsBulkPrefetch_ListedAsFinishedWithItsFinalFigures()
    {
        using var root = new TempDirectory("indexing-engine-host-tests");
        await using var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = root.Path, Storage = new StoreOptions(syncWrites: false) });
        var loaded = engine.PutMany(DatasetGenerator.Generate(new DatasetSpec(DatasetShape.Uniform, documentCount: 300, maxDocumentBytes: 8 << 10))
            .Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
        Assert.Empty(engine.ListFinishedPrefetches());
        var before = DateTimeOffset.UtcNow;

        engine.DefineIndex(ManagerEnvironment.V1);
        var rebuild = await engine.WaitForRebuildAsync("orders").WaitAsync(TimeSpan.FromSeconds(90)) ?? engine.GetRebuild("orders");

        Assert.Equal(RebuildPhase.Done, rebuild!.Phase);
        Assert.Empty(engine.ListPrefetches());
        var finished = Assert.Single(engine.ListFinishedPrefetches());
        Assert.Equal("rebuild orders", finished.Name);
        Assert.Equal(PrefetchState.Completed, finished.State);
        Assert.Equal("adaptive", finished.Strategy);
        Assert.Equal(loaded.Documents, finished.DocumentsDone);
        Assert.Equal(loaded.Documents, finished.DocumentsTotal);
        Assert.Equal(finished.BytesTotal, finished.BytesDone);
        Assert.InRange(finished.Timestamp, before, DateTimeOffset.UtcNow);
        // Only the record is kept: the name is free for the next rebuild, and nothing running is named so.
        Assert.Null(engine.GetPrefetch("rebuild orders"));
    }

    // The list keeps the last few, newest first; a prefetch stopped before its end (its consumer gone)
    // ended Cancelled, whatever it was reading when stopped, and one registration counts once.
    [Fact]
    public async Task FinishedPrefetches_KeepTheLastFewNewestFirst_AndAStoppedOneEndedCancelled()
    {
        using var root = new TempDirectory("indexing-engine-host-tests");
        await using var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = root.Path, Storage = new StoreOptions(syncWrites: false) });
        engine.PutMany(Enumerable.Range(1, 2000).Select(i => new DocumentWrite($"orders/{i:D4}", System.Text.Encoding.UTF8.GetBytes($$"""{"n":{{i}}}"""))));

        // With no consumer and a 1 KiB budget, an adaptive prefetch fills its budget and waits: it is still reading when stopped.
        await using (var stopped = Prefetch.Start(engine.Store, "orders", PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 1 << 10 }))
        {
            var registration = engine.Prefetches.Register("stopped early", stopped);
            var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
            while (stopped.Pressure.DocumentsRead == 0 && DateTime.UtcNow < deadline)
            {
                await Task.Delay(20);
            }

            Assert.True(stopped.Pressure.State is PrefetchState.Planning or PrefetchState.Running, stopped.Pressure.State.ToString());
            registration.Dispose();
            registration.Dispose();
        }

        var one = Assert.Single(engine.ListFinishedPrefetches());
        Assert.Equal("stopped early", one.Name);
        Assert.Equal(PrefetchState.Cancelled, one.State);
        Assert.True(one.DocumentsRead > 0);
        Assert.Equal(1 << 10, one.BudgetBytes);

        var names = Enumerable.Range(1, PrefetchRegistry.FinishedKept + 2).Select(i => $"pass {i}").ToList();
        foreach (var name in names)
        {
            await using var source = new MemoryBatchSource([], snapshotEtag: 0);
            engine.Prefetches.Register(name, source).Dispose();
        }

        var listed = engine.ListFinishedPrefetches();
        Assert.Equal(PrefetchRegistry.FinishedKept, listed.Count);
        Assert.Equal(names.AsEnumerable().Reverse().Take(PrefetchRegistry.FinishedKept), listed.Select(p => p.Name));
        Assert.All(listed, p => Assert.Equal(PrefetchState.Cancelled, p.State));
        Assert.Empty(engine.ListPrefetches());

        await engine.DisposeAsync();
        Assert.Throws<ObjectDisposedException>(() => engine.ListFinishedPrefetches());
    }

    [Fact]
    public void StartUpHelpers_SayWhatThePlatformCannotDo_AndRefuseNoArenas()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => IndexingEngine.LimitGlibcArenas(0));
        var expected = ThreadNice.CurrentThreadNice() is null ? ThreadNice.UnsupportedReason : null;
        Assert.Equal(expected, IndexingEngine.IndexingThreadNiceUnsupportedReason);
    }
}
