using System.Diagnostics;

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
    public async Task Build_SlowFirstSecond_CommitsAtTheCadenceOnceTheRateIsKnown()
    {
        // 3,000 documents with their total known, in batches of 10: the first batch at once, the
        // next after 1.5 s, the rest at once but the last, held 3 s. A second in, one batch of 300
        // is done, so the build looks 300 s long and the cadence is its cap (10 s by default): the
        // bulk commit at 1 s was the build's only one while that wait was slept whole. Waking at
        // least every second, the loop sees the real rate once the documents flow, and commits them
        // within a second, at the latest while the last batch is held.
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(3_000));
        const int Batches = 300;
        var source = new KeyedBatchSource(documents, snapshotEtag: 900, batchDocuments: 10, reportTotals: true, beforeTake: async (batch, cancellationToken) =>
        {
            if (batch is 1 or Batches - 1)
            {
                await Task.Delay(TimeSpan.FromSeconds(batch == 1 ? 1.5 : 3), cancellationToken);
            }
        });
        var index = environment.OpenIndex(options: new IndexOptions { IndexingThreads = 2 });
        Assert.Equal(TimeSpan.FromSeconds(10), index.Options.BulkCommitInterval);
        var bulkCommits = new List<(TimeSpan At, string? Through)>();
        var started = Stopwatch.StartNew();

        var metrics = await index.BuildAsync(source, resume: false, bulkCommitted: through => bulkCommits.Add((started.Elapsed, through)), CancellationToken.None)
            .WaitAsync(HangGuard);

        Assert.Equal(3_000, metrics.Documents);
        // Usually one at about 1 s through the first batch (skipped if that batch was not indexed
        // yet); then one through documents that came after the stall, which the capped wait missed.
        var describe = $"Bulk commits in a {started.Elapsed.TotalSeconds:0.0} s build: {string.Join(", ", bulkCommits.Select(c => $"{c.At.TotalSeconds:0.0} s through {c.Through}"))}.";
        Assert.NotEmpty(bulkCommits);
        Assert.True(string.CompareOrdinal(bulkCommits[^1].Through, source.BatchEnds[1]) >= 0, describe);
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
