namespace Indexing.Indexer.Tests.Index;

// Resuming an interrupted build after its indexed-through key, at the level of one index.
public sealed class BuildResumeTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task ResumeBuild_AfterTheKey_ReadsOnlyLaterIds_AndReplacesThoseTheCommitHeldAlready()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(300));
        await BulkCommitTests.InterruptBehindASlowBatchAsync(environment, documents);
        var index = environment.OpenIndex();
        Assert.InRange(index.GetStatus().DocumentCount, 290, 291);
        Assert.Equal(20, index.CountDocumentsThrough(documents[19].Id));

        // A newer snapshot (950) read from after the key, as a resumed rebuild's source would.
        var source = new KeyedBatchSource(documents, snapshotEtag: 950, batchDocuments: 10, startAfter: documents[19].Id);
        var metrics = await index.ResumeBuildAsync(source).WaitAsync(HangGuard);

        Assert.Equal(280, metrics.DocumentsRead);
        Assert.Equal(documents.Skip(20).Select(d => d.Id), source.HandedOut);
        var status = index.GetStatus();
        Assert.False(status.BuildInterrupted);
        Assert.Null(status.BuildIndexedThrough);
        // The interrupted build's snapshot, not the source's: the change feed is applied from there.
        Assert.Equal(900, status.CommittedEtag);
        // Documents 21..299 were in the commit already and were read again: replaced, not duplicated.
        var all = index.Query(new IndexQuery("*:*") { Take = 1000 });
        Assert.Equal(300, all.TotalHits);
        Assert.Equal(documents.Select(d => (d.Id, d.Etag)).Order(), all.Hits.Select(h => (h.Id, h.Etag)).Order());
    }

    [Fact]
    public async Task ResumeBuild_WithoutAnInterruptedBuild_OrFromTheWrongPlace_IsRefused()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(300));
        var fresh = environment.OpenIndex(name: "fresh");
        var none = await Assert.ThrowsAsync<InvalidOperationException>(() => fresh.ResumeBuildAsync(new KeyedBatchSource(documents, 900, 10)));
        Assert.Contains("holds no interrupted build", none.Message, StringComparison.Ordinal);
        Assert.Equal(IndexState.Idle, fresh.State);

        await BulkCommitTests.InterruptBehindASlowBatchAsync(environment, documents);
        var index = environment.OpenIndex();
        var elsewhere = await Assert.ThrowsAsync<ArgumentException>(
            () => index.ResumeBuildAsync(new KeyedBatchSource(documents, 950, 10, startAfter: documents[29].Id)));
        Assert.Contains($"indexed through '{documents[19].Id}'", elsewhere.Message, StringComparison.Ordinal);
        var older = await Assert.ThrowsAsync<ArgumentException>(
            () => index.ResumeBuildAsync(new KeyedBatchSource(documents, 899, 10, startAfter: documents[19].Id)));
        Assert.Contains("older than the interrupted build's snapshot etag 900", older.Message, StringComparison.Ordinal);
        Assert.True(index.GetStatus().BuildInterrupted);
        Assert.Equal(documents[19].Id, index.GetStatus().BuildIndexedThrough);
    }
}
