using Indexing.Storage;

using Lucene.Net.Index;
using Lucene.Net.Store;

namespace Indexing.Indexer.Tests.Index;

public sealed class CheckpointTests
{
    [Fact]
    public void Reopen_AfterDispose_ResumesFromTheCheckpointWithoutRereading()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        var documents = IndexTestEnvironment.Generate(300);
        var firstEtag = environment.Put(documents);

        var index = environment.OpenIndex();
        var first = index.CatchUp(store);
        Assert.Equal(300, index.GetStatus().Metrics.DocumentsRead);
        Assert.True(first.CaughtUp);
        index.Dispose();

        // 50 new documents, 10 updated, 5 deleted.
        environment.Put(IndexTestEnvironment.Generate(350).Skip(300));
        foreach (var document in documents.Take(10))
        {
            store.Put(document.Id, """{"status":"updated","customer":{"name":"someone"}}""");
        }

        foreach (var document in documents.Skip(10).Take(5))
        {
            store.Delete(document.Id);
        }

        var reopened = environment.OpenIndex();
        var status = reopened.GetStatus();
        Assert.Equal(firstEtag, status.CommittedEtag);
        Assert.Equal(firstEtag, status.AppliedEtag);
        Assert.Equal(300, status.DocumentCount);

        var second = reopened.CatchUp(store);
        Assert.Equal(store.LastEtag, second.ToEtag);
        var after = reopened.GetStatus();
        Assert.Equal(60, after.Metrics.DocumentsRead);
        Assert.Equal(5, after.Metrics.Deletes);
        Assert.Equal(345, after.DocumentCount);
        Assert.Equal(10, reopened.Query(new IndexQuery("status:updated")).TotalHits);
    }

    [Fact]
    public void Open_WithAChangedDefinition_IsStaleAndRefusesToWrite()
    {
        using var environment = new IndexTestEnvironment();
        environment.Put(IndexTestEnvironment.Generate(20));
        var index = environment.OpenIndex();
        index.CatchUp(environment.RequireStore);
        index.Dispose();

        var changed = IndexDefinition.Parse(IndexTestEnvironment.OrdersDefinitionJson.Replace(
            "\"name\": \"tier\", \"path\": \"customer.tier\"", "\"name\": \"tier\", \"path\": \"customer.city\"", StringComparison.Ordinal));
        Assert.NotEqual(IndexTestEnvironment.Orders.DefinitionHash, changed.DefinitionHash);
        var reopened = environment.OpenIndex(changed);

        var status = reopened.GetStatus();
        Assert.True(status.IsStale);
        Assert.Equal(IndexTestEnvironment.Orders.DefinitionHash, status.CommittedDefinitionHash);
        Assert.Equal(changed.DefinitionHash, status.DefinitionHash);
        Assert.Equal(20, status.DocumentCount);
        var refused = Assert.Throws<InvalidOperationException>(() => reopened.CatchUp(environment.RequireStore));
        Assert.Contains("index 'orders-all' cannot catch up: it was built with definition hash", refused.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(() => reopened.StartFollowing(environment.RequireStore));
        Assert.Equal(20, reopened.Query(new IndexQuery("*:*")).TotalHits);

        // The same definition again is not stale: the check is by content hash.
        reopened.Dispose();
        Assert.False(environment.OpenIndex().IsStale);
    }

    [Fact]
    public void Open_WithTheSameDefinitionUnderAnotherSpelling_IsNotStale()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        environment.OpenIndex().Dispose();
        var reordered = IndexDefinition.Create(
            IndexTestEnvironment.Orders.Name, IndexTestEnvironment.Orders.Collection, IndexTestEnvironment.Orders.Fields.Reverse());
        Assert.False(environment.OpenIndex(reordered).GetStatus().IsStale);
    }

    [Fact]
    public void Open_WhileAnotherWriterHoldsTheDirectory_ThrowsNamingTheIndex()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        environment.OpenIndex();
        var exception = Assert.Throws<IndexWriteException>(() => DocumentIndex.Open(environment.IndexDirectory(), IndexTestEnvironment.Orders));
        Assert.Contains("index 'orders-all'", exception.Message, StringComparison.Ordinal);
        Assert.Contains("locked by another open writer", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void AbandonedWriter_FreshWriterOverTheDirectory_ReopensAtTheLastCommitAndCatchesUpWithoutDuplicates()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        var documents = IndexTestEnvironment.Generate(200);
        environment.Put(documents.Take(100));
        var abandoned = environment.OpenIndex(options: new IndexOptions { CommitInterval = TimeSpan.FromHours(1) });
        abandoned.CatchUp(store);
        abandoned.Commit();
        var committedEtag = abandoned.GetStatus().CommittedEtag;

        // Written after the commit and flushed to segment files (a refresh does that), never committed.
        environment.Put(documents.Skip(100));
        foreach (var document in documents.Take(20))
        {
            store.Put(document.Id, """{"status":"revised"}""");
        }

        foreach (var document in documents.Skip(20).Take(10))
        {
            store.Delete(document.Id);
        }

        abandoned.CatchUp(store);
        Assert.Equal(190, abandoned.GetStatus().DocumentCount);
        abandoned.SimulateCrash();

        // What the OS does when the process holding the lock dies.
        using (var directory = FSDirectory.Open(environment.IndexDirectory()))
        {
            Assert.True(IndexWriter.IsLocked(directory));
            IndexWriter.Unlock(directory);
        }

        var fresh = environment.OpenIndex();
        var reopened = fresh.GetStatus();
        Assert.Equal(committedEtag, reopened.AppliedEtag);
        Assert.Equal(100, reopened.DocumentCount);

        fresh.CatchUp(store);
        var live = store.ScanMetadata("orders").Select(m => m.Id).ToList();
        Assert.Equal(190, live.Count);
        var all = fresh.Query(new IndexQuery("*:*") { Take = 1000 });
        Assert.Equal(live.Count, all.TotalHits);
        Assert.Equal(live.Order(StringComparer.Ordinal), all.Hits.Select(h => h.Id).Order(StringComparer.Ordinal));
        Assert.Equal(20, fresh.Query(new IndexQuery("status:revised")).TotalHits);
        foreach (var hit in all.Hits)
        {
            Assert.Equal(store.GetMetadata(hit.Id)!.Value.Etag, hit.Etag);
        }

        var verify = fresh.Verify(store);
        Assert.True(verify.IsConsistent, $"missing {verify.Missing}, extra {verify.Extra}, stale {verify.Stale}, duplicates {verify.Duplicates}");
        Assert.Equal(190, verify.StoreDocuments);
    }

    [Fact]
    public async Task Build_Interrupted_IsReportedOnReopenAndARebuildStartsOver()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = IndexTestEnvironment.Generate(300);
        var index = environment.OpenIndex(options: new IndexOptions { IndexingThreads = 1, TakeMaxDocuments = 10 });
        using var cancel = new CancellationTokenSource();
        var source = new CancellingSource(IndexTestEnvironment.Source(documents, snapshotEtag: 900), cancelAfter: 100, cancel);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => index.BuildAsync(source, cancel.Token).WaitAsync(TimeSpan.FromMinutes(1)));
        Assert.True(index.GetStatus().BuildInterrupted);
        index.Dispose();

        var reopened = environment.OpenIndex();
        var status = reopened.GetStatus();
        Assert.True(status.BuildInterrupted);
        Assert.Equal(0, status.CommittedEtag);

        var metrics = await reopened.BuildAsync(IndexTestEnvironment.Source(documents, snapshotEtag: 900)).WaitAsync(TimeSpan.FromMinutes(1));
        Assert.Equal(300, metrics.Documents);
        var rebuilt = reopened.GetStatus();
        Assert.False(rebuilt.BuildInterrupted);
        Assert.Equal(900, rebuilt.CommittedEtag);
        Assert.Equal(300, rebuilt.DocumentCount);
    }

    // Cancels the build's token once this many documents were taken.
    private sealed class CancellingSource(MemoryBatchSource inner, int cancelAfter, CancellationTokenSource cancel) : Prefetcher.IBatchSource
    {
        public Prefetcher.PrefetchPressure Pressure => inner.Pressure;

        public long SnapshotEtag => inner.SnapshotEtag;

        public string? HandedOutThrough => inner.HandedOutThrough;

        public Prefetcher.PrefetchPipeline? Pipeline => inner.Pipeline;

        public ValueTask<Prefetcher.PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
        {
            if (inner.Taken >= cancelAfter)
            {
                cancel.Cancel();
            }

            return inner.TakeAsync(maxDocuments, maxBytes, cancellationToken);
        }

        public IAsyncEnumerable<Prefetcher.PrefetchBatch> ReadAllAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
            inner.ReadAllAsync(maxDocuments, maxBytes, cancellationToken);

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
