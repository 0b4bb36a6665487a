using System.Text;
using System.Threading.Channels;
using Indexing.Datasets;
using Indexing.Engine;
using Indexing.Indexer.Tests.SideBySide;
using Indexing.Storage;
using Microsoft.Extensions.Options;

namespace Indexing.Indexer.Tests.Engine;

// The engine as a host sees it: one data directory, its options tree, documents, indexes, rebuild
// events, a resume after a close mid-build, and what it refuses.
public sealed class IndexingEngineTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(90);

    [Fact]
    public void Open_InvalidOptions_NamesEachSettingByItsPathInTheTree_AndCreatesNothing()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        var options = new EngineOptions
        {
            DataDirectory = root.Path,
            Storage = new StoreOptions(maxDocumentBytes: 10),
            Indexes = new IndexOptions { IndexingThreads = 0, SwapLagEtags = -1, PrefetchBudgetBytes = 1000 },
        };

        var error = Assert.Throws<OptionsValidationException>(() => IndexingEngine.Open(options));

        Assert.Contains(error.Failures, f => f.StartsWith("Storage:MaxDocumentBytes is 10 B", StringComparison.Ordinal));
        Assert.Contains(error.Failures, f => f.StartsWith("Indexes:IndexingThreads is 0", StringComparison.Ordinal));
        Assert.Contains(error.Failures, f => f.StartsWith("Indexes:SwapLagEtags is -1", StringComparison.Ordinal));
        Assert.Contains("Indexes:PrefetchBudgetBytes is 1000; it must be from 1 MiB to 64 GiB.", error.Failures);
        Assert.False(Directory.Exists(root.Path), "a refused open created the data directory");
    }

    [Fact]
    public async Task DefineChangeQueryDelete_ThroughTheEngine_RaisesEachPhaseInOrder_AndQueriesSeeEveryDocument()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        var engine = IndexingEngine.Open(Options(root.Path));
        await using var closing = engine;
        var events = Channel.CreateUnbounded<RebuildEvent>();
        object? seenSender = null;
        engine.RebuildChanged += (sender, change) =>
        {
            seenSender = sender;
            events.Writer.TryWrite(change);
        };
        var loaded = engine.PutMany(Orders(300));
        Assert.Equal(300, loaded.Documents);

        Assert.Equal(IndexPutResult.Created, engine.DefineIndex(ManagerEnvironment.V1));
        Assert.Equal([RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], await PhasesUntilEndAsync(events.Reader));
        Assert.Same(engine, seenSender);

        Assert.Equal(IndexPutResult.RebuildStarted, engine.DefineIndex(ManagerEnvironment.V2));
        engine.Put("orders/extra", """{"customer":{"name":"late"},"status":"late","total":1,"itemCount":1,"paid":true}""");
        Assert.Equal([RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], await PhasesUntilEndAsync(events.Reader));
        var summary = engine.GetIndex("orders");
        Assert.Equal(2, summary.Generation);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, summary.DefinitionHash);

        var report = engine.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(301, report.IndexDocuments);
        Assert.Equal(1, await EventuallyAsync(() => engine.Query("orders", new IndexQuery("status:late")).TotalHits, 1));
        Assert.True(engine.GetStoreStatus().WritesAccepted);
        Assert.Equal(["orders"], engine.ListIndexes().Select(i => i.Name));

        await engine.DeleteIndexAsync("orders");
        Assert.Empty(engine.ListIndexes());
        Assert.Throws<IndexNotFoundException>(() => engine.GetIndex("orders"));
        Assert.NotNull(engine.Get("orders/extra"));
    }

    [Fact]
    public async Task Reopen_AfterACloseMidBulk_ResumesAfterTheCommittedKey_WithNoKeyPassedByTheHost()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        const int Documents = 40_000;
        var checkpointed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var closing = new ManualResetEventSlim();
        var slow = Options(root.Path) with
        {
            // Small takes and a commit after every 1% of the documents, so the bulk phase commits a key
            // long before its end. The key is the contiguous prefix taken.
            Indexes = new IndexOptions { TakeMaxDocuments = 16, BulkCommitInterval = TimeSpan.FromMilliseconds(100), BulkCommitShare = 0.01 },
        };
        var first = IndexingEngine.Open(slow, manager => manager with
        {
            RebuildHook = (_, point) =>
            {
                if (point == RebuildPoint.BulkCheckpointed && checkpointed.TrySetResult())
                {
                    // The commit task holds here, after the first commit with a key, until the close has
                    // cancelled the build (released by a timeout too, so a test that failed before the
                    // close does not hang). The workers go on meanwhile: a build that indexes every
                    // document before the close ends its bulk phase anyway, so the collection is large
                    // (the first key comes at 1% of it; the other 99% take seconds) for the close to
                    // come mid-bulk on a loaded machine too.
                    closing.Wait(HangGuard);
                }
            },
        });
        first.PutMany(Orders(Documents));
        first.DefineIndex(ManagerEnvironment.V1);
        var committed = await Task.WhenAny(checkpointed.Task, Task.Delay(HangGuard));
        Assert.True(committed == checkpointed.Task, $"no bulk commit with a key within {HangGuard}; the rebuild: {first.GetRebuild("orders")}");
        // The close cancels every rebuild before it first yields; only then is the build let go.
        var close = first.DisposeAsync();
        closing.Set();
        await close;

        await using var second = IndexingEngine.Open(Options(root.Path));
        // Subscribed after the open resumed the rebuild: its phases from the start still arrive.
        var resumedPhases = Channel.CreateUnbounded<RebuildEvent>();
        second.RebuildChanged += (_, change) => resumedPhases.Writer.TryWrite(change);
        // The resumed rebuild may have ended before the wait begins: then the last one is the answer.
        var resumed = await second.WaitForRebuildAsync("orders").WaitAsync(HangGuard) ?? second.GetRebuild("orders");

        Assert.NotNull(resumed);
        Assert.Equal(RebuildPhase.Done, resumed.Phase);
        Assert.Equal([RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], await PhasesUntilEndAsync(resumedPhases.Reader));
        Assert.NotNull(resumed.ResumedAfter);
        Assert.True(resumed.DocumentsSkipped > 0, $"the resumed build skipped {resumed.DocumentsSkipped} documents");
        var report = second.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(Documents, report.IndexDocuments);
    }

    [Fact]
    public async Task PastMaxConcurrentRebuilds_OnlyTheRebuildThatWaits_RaisesQueued()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        using var release = new ManualResetEventSlim();
        var reached = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var options = Options(root.Path);
        options = options with { Indexes = options.Indexes with { MaxConcurrentRebuilds = 1 } };
        await using var engine = IndexingEngine.Open(options, manager => manager with
        {
            RebuildHook = (name, point) =>
            {
                if (name == "a" && point == RebuildPoint.BulkStarted && reached.TrySetResult())
                {
                    release.Wait(HangGuard);
                }
            },
        });
        var events = Channel.CreateUnbounded<RebuildEvent>();
        engine.RebuildChanged += (_, change) => events.Writer.TryWrite(change);
        engine.PutMany(Orders(300));

        engine.DefineIndex(Named(ManagerEnvironment.V1Json, "a"));
        await reached.Task.WaitAsync(HangGuard);
        engine.DefineIndex(Named(ManagerEnvironment.V1Json, "b"));
        var queued = engine.GetRebuild("b")!;
        var pressure = engine.GetRebuildPressure("b");
        // The running rebuild's progress names its prefetch as the engine does, with its live limits.
        var reading = engine.GetRebuild("a")!.Prefetch;
        var registered = engine.GetRebuildPressure("a");
        release.Set();
        var phases = new Dictionary<string, List<RebuildPhase>> { ["a"] = [], ["b"] = [] };
        using var guard = new CancellationTokenSource(HangGuard);
        while (phases.Values.Any(list => list.Count == 0 || list[^1] is not (RebuildPhase.Done or RebuildPhase.Failed or RebuildPhase.Cancelled)))
        {
            var change = await events.Reader.ReadAsync(guard.Token);
            phases[change.Index].Add(change.Phase);
        }

        Assert.Equal(RebuildPhase.Queued, queued.Phase);
        Assert.Equal(1, queued.QueuePosition);
        Assert.Null(pressure);
        Assert.Equal("rebuild a", reading?.Name);
        Assert.NotNull(reading!.Limits);
        Assert.Equal(registered?.Name, reading.Name);
        Assert.Equal(registered?.Limits, reading.Limits);
        Assert.Equal([RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], phases["a"]);
        Assert.Equal([RebuildPhase.Queued, RebuildPhase.Bulk, RebuildPhase.CatchUp, RebuildPhase.Swapping, RebuildPhase.Done], phases["b"]);
        Assert.Equal(300, engine.Verify("b").IndexDocuments);
    }

    [Fact]
    public async Task RebuildLimits_NoRebuildReading_NullAndFalse_AndABadNameIsAnArgumentError()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        await using var engine = IndexingEngine.Open(Options(root.Path));
        engine.PutMany(Orders(20));
        engine.DefineIndex(ManagerEnvironment.V1);
        await engine.WaitForRebuildAsync("orders").WaitAsync(HangGuard);

        Assert.Null(engine.GetRebuildPressure("orders"));
        Assert.False(engine.UpdateRebuildLimits("orders", new Prefetcher.PrefetchLimits { BudgetBytes = 8 << 20 }));
        Assert.Throws<ArgumentException>(() => engine.GetRebuildPressure("../etc"));
    }

    [Fact]
    public async Task DocumentChecksEtagsAndReads_AsAServerUsesThem_WithoutPutting()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        await using var engine = IndexingEngine.Open(Options(root.Path) with { Storage = new StoreOptions(maxDocumentBytes: 1 << 10, syncWrites: false) });
        var etag = engine.Put("orders/1", """{"status":"new"}""");

        Assert.True(IndexingEngine.IsValidDocumentId("orders/2", out _));
        Assert.False(IndexingEngine.IsValidDocumentId("/2", out var idError));
        Assert.Equal(DocumentValidationRule.IdEmptyCollection, idError.Rule);
        Assert.True(engine.IsValidDocument("orders/2", """{"status":"new"}"""u8, out _));
        Assert.False(engine.IsValidDocument("orders/2", "[1]"u8, out var bodyError));
        Assert.Equal(DocumentValidationRule.BodyNotObject, bodyError.Rule);
        Assert.False(engine.IsValidDocument("orders/2", Encoding.UTF8.GetBytes($$"""{"note":"{{new string('x', 2000)}}"}"""), out var sizeError));
        Assert.Equal(DocumentValidationRule.BodyTooLarge, sizeError.Rule);
        Assert.Null(engine.Get("orders/2"));

        Assert.Equal(etag, engine.GetEtag("orders/1"));
        Assert.Null(engine.GetEtag("orders/2"));
        var read = engine.GetMany(["orders/2", "orders/1"]);
        Assert.Null(read[0]);
        Assert.Equal(etag, read[1]?.Etag);
        var store = engine.GetStoreStatus();
        Assert.Equal(etag, store.LastEtag);
        Assert.True(store.WritesAccepted);
    }

    [Fact]
    public async Task Dispose_Twice_IsQuiet_AndUseAfterItThrowsObjectDisposed()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        var engine = IndexingEngine.Open(Options(root.Path));
        engine.Put("orders/1", """{"status":"new"}""");

        await engine.DisposeAsync();
        await engine.DisposeAsync();

        Assert.Throws<ObjectDisposedException>(() => engine.Get("orders/1"));
        await using var reopened = IndexingEngine.Open(Options(root.Path));
        Assert.NotNull(reopened.Get("orders/1"));
    }

    [Fact]
    public async Task Failures_AreIndexingExceptions_ByFamily_WithTheirKind()
    {
        using var root = new TempDirectory("indexing-engine-tests");
        await using var engine = IndexingEngine.Open(Options(root.Path) with { Storage = new StoreOptions(maxDocumentBytes: 1 << 10, syncWrites: false) });

        IndexingException missing = Assert.Throws<IndexNotFoundException>(() => engine.GetIndex("nothing"));
        IndexingException tooLarge = Assert.Throws<DocumentValidationException>(() => engine.Put("orders/big", $$"""{"note":"{{new string('x', 2000)}}"}"""));

        Assert.Contains("nothing", missing.Message, StringComparison.Ordinal);
        Assert.Equal(IndexingErrorKind.IndexNotFound, missing.Kind);
        Assert.Contains("Storage:MaxDocumentBytes", tooLarge.Message, StringComparison.Ordinal);
        Assert.Equal(IndexingErrorKind.InvalidDocument, tooLarge.Kind);
    }

    private static EngineOptions Options(string dataDirectory) => new()
    {
        DataDirectory = dataDirectory,
        Storage = new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20),
        Indexes = new IndexOptions { RefreshInterval = TimeSpan.FromMilliseconds(50), FollowPollInterval = TimeSpan.FromMilliseconds(20), SwapLagEtags = 50 },
    };

    private static IndexDefinition Named(string json, string name) =>
        IndexDefinition.Parse(json.Replace("\"name\": \"orders\"", $"\"name\": \"{name}\"", StringComparison.Ordinal));

    private static IEnumerable<DocumentWrite> Orders(int count) =>
        DatasetGenerator.Generate(new DatasetSpec(DatasetShape.Uniform, documentCount: count, maxDocumentBytes: 8 << 10))
            .Select(d => new DocumentWrite(d.Id, d.Utf8Json));

    private static async Task<List<RebuildPhase>> PhasesUntilEndAsync(ChannelReader<RebuildEvent> events)
    {
        var phases = new List<RebuildPhase>();
        using var guard = new CancellationTokenSource(HangGuard);
        while (phases.Count == 0 || phases[^1] is not (RebuildPhase.Done or RebuildPhase.Failed or RebuildPhase.Cancelled))
        {
            phases.Add((await events.ReadAsync(guard.Token)).Phase);
        }

        return phases;
    }

    // A query sees a write once the index applied it and refreshed its searcher.
    private static async Task<long> EventuallyAsync(Func<long> read, long expected)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        var value = read();
        while (value != expected && DateTime.UtcNow < deadline)
        {
            await Task.Delay(20);
            value = read();
        }

        return value;
    }
}
