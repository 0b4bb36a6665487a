using System.Collections.Concurrent;
using Indexing.Prefetcher;
using Indexing.Storage;

using Xunit.Abstractions;

namespace Indexing.Indexer.Tests.SideBySide;

// Indexes:SharedPassWindow: rebuilds of indexes over one collection that start together share one
// read of it (one source from the factory, one snapshot), each builder still committing and
// resuming on its own; one that comes after the window waits for the pass to end; cancelling one
// leaves the others reading. Real store, Lucene and prefetcher; a killed process for the resume.
public sealed class SharedPassRebuildTests(ITestOutputHelper log)
{
    private static readonly string[] Four = ["a", "b", "c", "d"];

    // Long enough that every rebuild started together joins, however loaded the machine: each opens
    // its replacement's Lucene index before its bulk phase starts.
    private static readonly TimeSpan LongWindow = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task FourIndexesChangedTogether_ReadTheCollectionOnce_AndEachIsRebuiltAndVerified()
    {
        using var env = new ManagerEnvironment(documents: 600);
        var requests = new ConcurrentQueue<BulkSourceRequest>();
        var observer = new ReaderRecorder();
        var manager = env.OpenManager(Options(slots: 4, window: LongWindow), observer, Recording(requests));
        await BuildAsync(manager, Four);
        requests.Clear();
        observer.Clear();

        foreach (var name in Four)
        {
            Assert.Equal(IndexPutResult.RebuildStarted, manager.CreateOrUpdate(ManagerEnvironment.Named(ManagerEnvironment.V2Json, name)));
        }

        var rebuilt = new List<RebuildProgress>();
        foreach (var name in Four)
        {
            rebuilt.Add(await ManagerEnvironment.WaitForRebuildAsync(manager, name));
        }

        // One read for the four: one request to the factory, and every bulk phase read a reader of that one pass.
        Assert.Single(requests);
        var readers = observer.Readers.Select(r => Assert.IsType<SharedPass.Reader>(r.Source)).ToList();
        Assert.Equal(4, readers.Count);
        Assert.Single(readers.Select(r => r.Pass).Distinct());
        Assert.All(rebuilt, progress =>
        {
            Assert.Equal(RebuildPhase.Done, progress.Phase);
            Assert.Equal(rebuilt[0].SnapshotEtag, progress.SnapshotEtag);
            Assert.Equal(env.LiveDocuments(), progress.DocumentsDone);
            Assert.Equal(env.LiveDocuments(), progress.DocumentsTotal);
        });
        // The first to finish its bulk phase saw the others still reading with it.
        Assert.Contains(rebuilt, progress => progress.Prefetch?.SharedBy?.Count > 1);
        env.AssertRebuiltWithV2(manager, Four);
    }

    [Fact]
    public async Task RebuildAfterTheWindow_WaitsForThePassToEnd_ThenReadsInTheNext()
    {
        using var env = new ManagerEnvironment(documents: 400);
        var requests = new ConcurrentQueue<BulkSourceRequest>();
        var sources = new CountingBulkSources(Recording(requests));
        var manager = env.OpenManager(Options(slots: 2, window: TimeSpan.FromMilliseconds(200)), bulkSources: sources.Start);
        await BuildAsync(manager, "a", "b");
        requests.Clear();

        // Hold a's pass once it has read some, past its window.
        using var release = new CancellationTokenSource();
        var heldAt = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        sources.BeforeTake = async (read, _, token) =>
        {
            if (read >= 50 && !release.IsCancellationRequested)
            {
                heldAt.TrySetResult();
                await Task.Delay(Timeout.Infinite, release.Token).ContinueWith(_ => { }, TaskScheduler.Default);
            }
        };
        manager.CreateOrUpdate(ManagerEnvironment.Named(ManagerEnvironment.V2Json, "a"));
        await heldAt.Task.WaitAsync(TimeSpan.FromMinutes(1));
        await Task.Delay(400);

        manager.CreateOrUpdate(ManagerEnvironment.Named(ManagerEnvironment.V2Json, "b"));
        await WaitUntilAsync(() => manager.GetRebuild("b")?.Note?.Contains("waiting for the shared pass", StringComparison.Ordinal) == true);
        var waiting = manager.GetRebuild("b")!;
        Assert.Equal(RebuildPhase.Bulk, waiting.Phase);
        Assert.Null(waiting.Prefetch);
        Assert.Single(requests);

        sources.BeforeTake = null;
        await release.CancelAsync();
        var a = await ManagerEnvironment.WaitForRebuildAsync(manager, "a");
        var b = await ManagerEnvironment.WaitForRebuildAsync(manager, "b");

        Assert.Equal(RebuildPhase.Done, a.Phase);
        Assert.Equal(RebuildPhase.Done, b.Phase);
        Assert.Equal(["a", "b"], requests.Select(r => r.IndexName));
        Assert.True(b.SnapshotEtag >= a.SnapshotEtag);
        Assert.Contains("(feeding a) to end", b.Note, StringComparison.Ordinal);
        Assert.Contains("; waited ", b.Note, StringComparison.Ordinal);
        env.AssertRebuiltWithV2(manager, "a", "b");
    }

    [Fact]
    public async Task CancelOneOfAPass_TheOthersReadOnAndAreRebuilt()
    {
        using var env = new ManagerEnvironment(documents: 600);
        var requests = new ConcurrentQueue<BulkSourceRequest>();
        var sources = new CountingBulkSources(Recording(requests), delayPerTake: TimeSpan.FromMilliseconds(20));
        var manager = env.OpenManager(Options(slots: 3, window: LongWindow), bulkSources: sources.Start);
        string[] names = ["a", "b", "c"];
        await BuildAsync(manager, names);
        requests.Clear();
        var before = manager.GetSummary("b");

        foreach (var name in names)
        {
            manager.CreateOrUpdate(ManagerEnvironment.Named(ManagerEnvironment.V2Json, name));
        }

        await WaitUntilAsync(() => manager.GetRebuild("b")?.Prefetch?.DocumentsDone > 0);
        var cancelled = await manager.CancelRebuildAsync("b").WaitAsync(TimeSpan.FromMinutes(1));
        var a = await ManagerEnvironment.WaitForRebuildAsync(manager, "a");
        var c = await ManagerEnvironment.WaitForRebuildAsync(manager, "c");

        Assert.Equal(RebuildPhase.Cancelled, cancelled.Phase);
        Assert.Equal(RebuildPhase.Done, a.Phase);
        Assert.Equal(RebuildPhase.Done, c.Phase);
        Assert.Single(requests);
        Assert.Equal(env.LiveDocuments(), a.DocumentsDone);
        Assert.Equal(env.LiveDocuments(), c.DocumentsDone);
        env.AssertRebuiltWithV2(manager, "a", "c");
        Assert.Equal(before.DefinitionHash, manager.GetSummary("b").DefinitionHash);
        Assert.True(manager.Verify("b").IsConsistent);
    }

    [Fact]
    public async Task ZeroWindow_EachRebuildReadsOnItsOwn()
    {
        using var env = new ManagerEnvironment(documents: 300);
        var requests = new ConcurrentQueue<BulkSourceRequest>();
        var observer = new ReaderRecorder();
        var manager = env.OpenManager(Options(slots: 2, window: TimeSpan.Zero), observer, Recording(requests));
        await BuildAsync(manager, "a", "b");

        Assert.Equal(["a", "b"], requests.Select(r => r.IndexName).Order(StringComparer.Ordinal));
        Assert.All(observer.Readers, r => Assert.IsType<PrefetchPipeline>(r.Source));
    }

    // A real process rebuilds three indexes at once through one shared pass while a writer writes,
    // and is killed once each has made a bulk commit. The restart resumes each from its own key, and
    // every index ends equal to the store, the acknowledged writes included.
    [Fact]
    [Trait("Category", "Crash")]
    public async Task KilledDuringASharedPass_EachRebuildResumesFromItsOwnKey_AndVerifyIsClean()
    {
        string[] names = ["a", "b", "c"];
        using var env = new ManagerEnvironment(documents: 1200);
        var definitionFiles = await env.BuildV1ForTheCrashHostAsync(names);

        var output = await CrashHostProcess.RunUntilKilledAsync(
            ["shared", env.StoreDirectory, env.IndexRoot, "40", .. definitionFiles],
            "AT shared 40%");

        env.ReopenStoreAfterClose();
        var written = RebuildCrashTests.WrittenState.Check(env, output);
        Assert.True(written.Acknowledged > 0, "the writer acknowledged no write before the kill");
        var keys = names.ToDictionary(
            name => name,
            name => Assert.IsType<string>(LuceneIndexSink.ReadLastCommit(Path.Combine(env.IndexRoot, name, "g000002"))?.BuildIndexedThrough));
        log.WriteLine($"keys at the kill: {string.Join(", ", keys.Select(k => $"{k.Key} {k.Value}"))}; {written.Acknowledged} acknowledged writes");

        var manager = env.OpenManager(Options(slots: 3));
        foreach (var name in names)
        {
            var resumed = await ManagerEnvironment.WaitForRebuildAsync(manager, name);
            Assert.Equal(RebuildPhase.Done, resumed.Phase);
            Assert.Equal(keys[name], resumed.ResumedAfter);
            Assert.True(resumed.DocumentsSkipped > 0, $"{name} skipped nothing though its key is {keys[name]}");
        }

        env.AssertRebuiltWithV2(manager, names);
        foreach (var name in names)
        {
            // The writer's acknowledged documents are in every index (they are live, so verify counted them too).
            Assert.Equal(written.Live, manager.Query(name, new IndexQuery("status:written") { Take = 1 }).TotalHits);
        }
    }

    private static IndexManagerOptions Options(int slots, TimeSpan? window = null)
    {
        var options = ManagerEnvironment.FastOptions();
        return options with
        {
            Index = options.Index with { MaxConcurrentRebuilds = slots, SharedPassWindow = window ?? options.Index.SharedPassWindow },
        };
    }

    private static async Task BuildAsync(IndexManager manager, params string[] names)
    {
        foreach (var name in names)
        {
            manager.CreateOrUpdate(ManagerEnvironment.Named(ManagerEnvironment.V1Json, name));
        }

        foreach (var name in names)
        {
            Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, name)).Phase);
        }
    }

    // The adaptive source, recording each request the factory was given.
    private static BulkSourceFactory Recording(ConcurrentQueue<BulkSourceRequest> requests) => (request, cancellationToken) =>
    {
        requests.Enqueue(request);
        return ManagerEnvironment.AdaptiveSource(request, cancellationToken);
    };

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        using var patience = new CancellationTokenSource(TimeSpan.FromMinutes(1));
        while (!condition())
        {
            await Task.Delay(10, patience.Token);
        }
    }

    // The source each bulk phase was handed, by index.
    private sealed class ReaderRecorder : IRebuildObserver
    {
        private readonly ConcurrentQueue<(string Index, IBatchSource Source)> _readers = new();

        public IReadOnlyList<(string Index, IBatchSource Source)> Readers => [.. _readers];

        public IDisposable? BulkStarted(string indexName, IBatchSource source)
        {
            _readers.Enqueue((indexName, source));
            return null;
        }

        public void Clear() => _readers.Clear();
    }
}
