namespace Indexing.Indexer.Tests.Index;

// Bulk commits: off the feeding thread, every BulkCommitInterval, each recording the "indexed
// through" key (the contiguous completed prefix of batches), which a slow batch holds back.
public sealed class BulkCommitTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Build_FeederWaitingForTheSource_BulkCommitsGoOnAndRecordTheKey()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(100));
        DocumentIndex? index = null;
        long commitsAtWait = -1;
        string? keyAtWait = null;
        // Before taking batch 3 the feeder waits until a bulk commit has happened: commits made by the
        // feeding thread between takes never would, so this only ends if commits run elsewhere.
        var source = new KeyedBatchSource(documents, snapshotEtag: 900, batchDocuments: 10, beforeTake: async (batch, cancellationToken) =>
        {
            if (batch != 3)
            {
                return;
            }

            var deadline = DateTime.UtcNow + HangGuard;
            while (index!.GetStatus().Metrics.Commits < 2)
            {
                Assert.True(DateTime.UtcNow < deadline, "no bulk commit while the feeder waited for its source");
                await Task.Delay(10, cancellationToken);
            }

            var status = index.GetStatus();
            commitsAtWait = status.Metrics.Commits;
            keyAtWait = status.BuildIndexedThrough;
        });
        index = environment.OpenIndex(options: new IndexOptions { IndexingThreads = 2, BulkCommitInterval = TimeSpan.FromMilliseconds(100) });

        var metrics = await index.BuildAsync(source).WaitAsync(HangGuard);

        Assert.True(commitsAtWait >= 2, "the start commit and at least one bulk commit before batch 3 was taken");
        // The key of a commit is the end of a batch all of whose predecessors were indexed: 0, 1 or 2 here.
        Assert.Contains(keyAtWait, source.BatchEnds.Take(3));
        Assert.Equal(100, metrics.Documents);
        Assert.True(metrics.Commits >= 3, $"start, a bulk commit and the last commit: {metrics.Commits}");
        var end = index.GetStatus();
        Assert.Null(end.BuildSnapshotEtag);
        Assert.Null(end.BuildIndexedThrough);
        Assert.Equal(900, end.CommittedEtag);
        Assert.Equal(100, end.DocumentCount);
    }

    [Fact]
    public async Task Build_SlowBatchOnOneOfThreeThreads_HoldsTheKeyBackWhileLaterBatchesAreIndexed()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(300));

        await InterruptBehindASlowBatchAsync(environment, documents);

        var reopened = environment.OpenIndex(options: new IndexOptions());
        var status = reopened.GetStatus();
        Assert.True(status.BuildInterrupted);
        Assert.Equal(900, status.BuildSnapshotEtag);
        Assert.Equal(documents[19].Id, status.BuildIndexedThrough);
        // The commit holds the later batches too; only the key says what a resume may skip.
        Assert.InRange(status.DocumentCount, 290, 291);
    }

    /// <summary>
    /// Builds <paramref name="documents"/> (300, snapshot etag 900) on three threads in batches of
    /// 10, with the first document of batch 2 held on its thread until every other batch was indexed
    /// and a bulk commit recorded the key through batch 1; then stops the build and closes the index.
    /// Its directory then holds an interrupted build indexed through documents[19] whose last commit
    /// also holds batches 3 to 29.
    /// </summary>
    internal static async Task InterruptBehindASlowBatchAsync(IndexTestEnvironment environment, List<PrefetchedDocument> documents)
    {
        var slowId = documents[20].Id;
        using var release = new ManualResetEventSlim();
        var options = new IndexOptions
        {
            IndexingThreads = 3,
            BulkCommitInterval = TimeSpan.FromMilliseconds(100),
            BuildDocumentHook = id =>
            {
                if (id == slowId)
                {
                    release.Wait(HangGuard);
                }
            },
        };
        var index = environment.OpenIndex(options: options);
        var source = new KeyedBatchSource(documents, snapshotEtag: 900, batchDocuments: 10);
        using var cancel = new CancellationTokenSource();
        var build = index.BuildAsync(source, cancel.Token);

        // Every other batch gets indexed by the other two threads; the source is read to its end.
        IndexTestEnvironment.WaitUntil(() => index.GetStatus().Metrics.Documents == 290 && source.HandedOut.Count == 300, HangGuard, $"the other batches to be indexed ({index.GetStatus().Metrics.Documents} indexed, {source.HandedOut.Count} handed out, {index.GetStatus().LastError})");
        // A bulk commit recorded the key as far as the prefix goes: batches 0 and 1.
        IndexTestEnvironment.WaitUntil(() => index.GetStatus().BuildIndexedThrough == documents[19].Id, HangGuard, $"a bulk commit of batches 0 and 1 (committed {index.GetStatus().BuildIndexedThrough}, commits {index.GetStatus().Metrics.Commits}, {index.GetStatus().LastError}; batch ends {string.Join(",", source.BatchEnds.Take(4))})");

        // Stop the build here: the commit on close records the key the build reached.
        await cancel.CancelAsync();
        release.Set();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => build.WaitAsync(HangGuard));
        index.Dispose();
    }
}
