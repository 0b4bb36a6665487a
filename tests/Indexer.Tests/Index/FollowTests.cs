using System.Diagnostics;
using System.Text;

using Xunit.Abstractions;

namespace Indexing.Indexer.Tests.Index;

public sealed class FollowTests(ITestOutputHelper output)
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(10);

    [Fact]
    public void Following_PutsUpdatesAndDeletes_AreVisibleToQueriesSoon()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        environment.Put(IndexTestEnvironment.Generate(50));
        var index = environment.OpenIndex();
        index.StartFollowing(store);
        Assert.Equal(IndexState.Following, index.State);
        WaitForHits(index, "*:*", 50);

        var put = Stopwatch.StartNew();
        store.Put("orders/new-1", """{"status":"fresh","itemCount":4}""");
        WaitForHits(index, "status:fresh", 1);
        var putLag = put.Elapsed;

        var update = Stopwatch.StartNew();
        store.Put("orders/new-1", """{"status":"changed","itemCount":5}""");
        WaitForHits(index, "status:changed", 1);
        var updateLag = update.Elapsed;
        Assert.Equal(0, index.Query(new IndexQuery("status:fresh")).TotalHits);
        Assert.Equal(1, index.Query(new IndexQuery("itemCount:5")).TotalHits);

        var delete = Stopwatch.StartNew();
        store.Delete("orders/new-1");
        WaitForHits(index, "__id:\"orders/new-1\"", 0);
        var deleteLag = delete.Elapsed;
        Assert.Equal(50, index.Query(new IndexQuery("*:*")).TotalHits);

        // The promise is "within 1 s" (poll 100 ms + refresh 200 ms by default); the figure is
        // written out rather than asserted, as this machine is shared.
        output.WriteLine($"visible after put {putLag.TotalMilliseconds:F0} ms, update {updateLag.TotalMilliseconds:F0} ms, delete {deleteLag.TotalMilliseconds:F0} ms");
        var status = index.GetStatus();
        Assert.Equal(store.LastEtag, status.AppliedEtag);
        Assert.Equal(1, status.Metrics.Deletes);
    }

    [Fact]
    public void Following_OtherCollections_AreNotIndexedButAdvanceTheEtag()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        var index = environment.OpenIndex();
        store.Put("customers/1", """{"status":"fresh"}""");
        var last = store.Put("orders/1", """{"status":"fresh"}""");
        store.Put("customers/2", """{"status":"fresh"}""");

        var result = index.CatchUp(store);

        Assert.Equal(3, result.AppliedChanges);
        Assert.Equal(store.LastEtag, result.ToEtag);
        Assert.True(result.CaughtUp);
        Assert.Equal(["orders/1"], index.Query(new IndexQuery("status:fresh")).Hits.Select(h => h.Id));
        Assert.Equal(last, index.Query(new IndexQuery("status:fresh")).Hits[0].Etag);
    }

    [Fact]
    public void PauseFollowing_ThenCatchUpToAnEtag_AppliesExactlyThatFarAndResumeAppliesTheRest()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        var index = environment.OpenIndex();
        index.StartFollowing(store);
        var first = store.Put("orders/1", """{"status":"one"}""");
        WaitForHits(index, "status:one", 1);

        index.PauseFollowing();
        Assert.Equal(IndexState.Paused, index.State);
        var second = store.Put("orders/2", """{"status":"two"}""");
        var third = store.Put("orders/3", """{"status":"three"}""");
        // Several poll intervals: a paused index applies nothing.
        Thread.Sleep(index.Options.FollowPollInterval * 5);
        Assert.Equal(first, index.GetStatus().AppliedEtag);

        var step = index.CatchUp(store, upToEtag: second);
        Assert.Equal(second, step.ToEtag);
        Assert.True(step.CaughtUp);
        Assert.Equal(1, index.Query(new IndexQuery("status:two")).TotalHits);
        Assert.Equal(0, index.Query(new IndexQuery("status:three")).TotalHits);
        Assert.Equal(IndexState.Paused, index.State);

        index.ResumeFollowing();
        WaitForHits(index, "status:three", 1);
        Assert.Equal(third, index.GetStatus().AppliedEtag);
    }

    [Fact]
    public async Task Following_AfterABuild_ContinuesFromTheSnapshotEtag()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        var documents = IndexTestEnvironment.Generate(100);
        environment.Put(documents);
        var snapshot = store.LastEtag;
        var index = environment.OpenIndex();
        var bodies = store.GetMany([.. documents.Select(d => d.Id)]);
        var source = new MemoryBatchSource([.. bodies.Select(b => new Prefetcher.PrefetchedDocument(b!.Value.Id, b.Value.Etag, b.Value.Body))], snapshot);
        await index.BuildAsync(source).WaitAsync(_hangGuard);
        store.Put(documents[0].Id, """{"status":"after-build"}""");

        var result = index.CatchUp(store);

        Assert.Equal(1, result.AppliedChanges);
        Assert.Equal(1, index.GetStatus().Metrics.DocumentsRead - 100);
        Assert.Equal(1, index.Query(new IndexQuery("status:after-build")).TotalHits);
        Assert.Equal(100, index.Query(new IndexQuery("*:*")).TotalHits);
    }

    [Fact]
    public void Query_WithTheStore_LoadsTheHitsDocuments()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        store.Put("orders/b", """{"status":"x","itemCount":2}""");
        store.Put("orders/a", """{"status":"x","itemCount":1}""");
        var index = environment.OpenIndex();
        index.CatchUp(store);
        var result = index.Query(new IndexQuery("status:x") { Sort = ["itemCount"] }, store);

        Assert.Equal(["orders/a", "orders/b"], result.Hits.Select(h => h.Id));
        Assert.Equal(2, result.Documents.Count);
        Assert.Equal("""{"status":"x","itemCount":1}""", Encoding.UTF8.GetString(result.Documents[0]!.Value.Body));
        // Deleted after the index saw it, as a query racing a delete would find it.
        store.Delete("orders/b");
        Assert.Null(index.Query(new IndexQuery("status:x") { Sort = ["itemCount"] }, store).Documents[1]);
    }

    [Fact]
    public void Following_StoreFailsRepeatedly_MovesToErrorWithTheLastErrorInsteadOfLooping()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        store.Put("orders/1", """{"status":"x"}""");
        var index = environment.OpenIndex(options: new IndexOptions { MaxConsecutiveFailures = 3, FollowPollInterval = TimeSpan.FromMilliseconds(10) });
        index.StartFollowing(store);
        WaitForHits(index, "status:x", 1);

        // The store goes away under the follower: every step fails.
        environment.CloseStore();
        IndexTestEnvironment.WaitUntil(() => index.State == IndexState.Error, _hangGuard, "the index to enter Error");

        var status = index.GetStatus();
        Assert.Equal(3, status.ConsecutiveFailures);
        Assert.Contains("index 'orders-all': applying the change feed after etag 1 failed", status.LastError, StringComparison.Ordinal);
        Assert.Equal(1, index.Query(new IndexQuery("status:x")).TotalHits);
        var refused = Assert.Throws<InvalidOperationException>(() => index.CatchUp(store));
        Assert.Contains("cannot catch up while it is Error", refused.Message, StringComparison.Ordinal);
    }

    private static void WaitForHits(DocumentIndex index, string query, long expected) =>
        IndexTestEnvironment.WaitUntil(() => index.Query(new IndexQuery(query)).TotalHits == expected, _hangGuard, $"{expected} hits for {query}");
}
