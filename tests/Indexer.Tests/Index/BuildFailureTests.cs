using Indexing.Storage;

using Lucene.Net.Store;

namespace Indexing.Indexer.Tests.Index;

// The engine fails during a bulk build (a commit's flush, as a full disk fails it): Lucene drops the
// documents that flush held. Whatever the build then records, on disk or in memory for Dispose to
// commit, must claim no document the index lacks: either the build is complete, or its key covers
// only what the index holds, so a resume (or a new build) loses nothing.
public sealed class BuildFailureTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(60);

    // A flush writes the terms dictionary (.tim); adding documents does not, so this fails the first
    // flush after it is armed: a commit's, during a build (whose refreshes are off).
    private static bool FlushWrite(FileOperation operation, string file) => operation == FileOperation.Write && file.EndsWith(".tim", StringComparison.Ordinal);

    [Fact]
    public async Task Build_TheLastCommitFails_TheReopenedIndexClaimsNoDocumentItLacks()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(200));
        var plan = new FaultPlan();
        var index = environment.OpenIndex(options: Faulty(plan, new IndexOptions { IndexingThreads = 2 }));
        // Armed as the last batch is taken: the next flush is the last commit's.
        var source = new KeyedBatchSource(documents, snapshotEtag: 900, batchDocuments: 20, beforeTake: (batch, _) =>
        {
            if (batch == 9)
            {
                plan.FailNext(FlushWrite);
            }

            return ValueTask.CompletedTask;
        });

        var failure = await Assert.ThrowsAsync<IndexWriteException>(() => index.BuildAsync(source).WaitAsync(HangGuard));
        Assert.Contains("injected", failure.ToString(), StringComparison.Ordinal);
        Assert.Equal(1, plan.Failures);
        index.Dispose(); // what a SIGTERM does: the close commits what the index then believes

        var reopened = environment.OpenIndex(options: new IndexOptions());
        AssertClaimsOnlyWhatItHolds(reopened, documents, snapshotEtag: 900);
        Assert.True(reopened.GetStatus().BuildInterrupted);

        // Space is back: a build completes it.
        var metrics = await (reopened.GetStatus().BuildIndexedThrough is { } key
            ? reopened.ResumeBuildAsync(new KeyedBatchSource(documents, 950, 20, startAfter: key))
            : reopened.BuildAsync(new KeyedBatchSource(documents, 900, 20))).WaitAsync(HangGuard);
        Assert.True(metrics.Documents > 0);
        AssertClaimsOnlyWhatItHolds(reopened, documents, snapshotEtag: 900);
        Assert.Equal(200, reopened.GetStatus().DocumentCount);
    }

    [Fact]
    public async Task Build_ABulkCommitFails_TheKeyStaysWhereTheIndexHoldsEveryDocument()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(300));
        var plan = new FaultPlan();
        DocumentIndex? index = null;
        // Batches come slowly, so bulk commits (every 100 ms) record keys along the way; once one
        // has, the next commit's flush fails.
        var source = new KeyedBatchSource(documents, snapshotEtag: 900, batchDocuments: 10, beforeTake: async (batch, cancellationToken) =>
        {
            await Task.Delay(20, cancellationToken);
            if (batch == 12)
            {
                IndexTestEnvironment.WaitUntil(() => index!.GetStatus().BuildIndexedThrough is not null, HangGuard, "a bulk commit with a key");
                plan.FailNext(FlushWrite);
            }
        });
        index = environment.OpenIndex(options: Faulty(plan, new IndexOptions { IndexingThreads = 2, BulkCommitInterval = TimeSpan.FromMilliseconds(100) }));

        await Assert.ThrowsAsync<IndexWriteException>(() => index.BuildAsync(source).WaitAsync(HangGuard));
        Assert.Equal(1, plan.Failures);
        Assert.Equal(IndexState.Idle, index.State);
        var failed = index.GetStatus().LastError;
        index.Dispose();

        var reopened = environment.OpenIndex(options: new IndexOptions());
        var status = reopened.GetStatus();
        Assert.True(status.BuildInterrupted);
        AssertClaimsOnlyWhatItHolds(reopened, documents, snapshotEtag: 900);

        // The failing flush is mostly the next commit's own: the last commit's key then stands, and the
        // resume reads after it. On a loaded machine it can be a worker's flush that a commit in progress
        // waited for, not for its outcome: that commit recorded documents it does not hold, so the failed
        // build dropped its key (BuildFailedLocked) and a new build starts over. Either way every document
        // ends up in the index and nothing claimed is missing.
        long completedAt;
        if (status.BuildIndexedThrough is { } key)
        {
            // A resume catches up from the interrupted build's snapshot, so it completes at 900.
            Assert.Contains("which holds every document through", failed, StringComparison.Ordinal);
            await reopened.ResumeBuildAsync(new KeyedBatchSource(documents, 950, 10, startAfter: key)).WaitAsync(HangGuard);
            completedAt = 900;
        }
        else
        {
            Assert.Contains("whose key it cannot keep", failed, StringComparison.Ordinal);
            await reopened.BuildAsync(new KeyedBatchSource(documents, 950, 10)).WaitAsync(HangGuard);
            completedAt = 950;
        }

        Assert.Equal(300, reopened.GetStatus().DocumentCount);
        AssertClaimsOnlyWhatItHolds(reopened, documents, snapshotEtag: completedAt);
    }

    [Fact]
    public async Task Build_AWorkerFailsOutsideTheEngine_ThrowsThatFailure_NotACancellation()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(100));
        var index = environment.OpenIndex(options: new IndexOptions
        {
            IndexingThreads = 2,
            BuildDocumentHook = id =>
            {
                if (id == documents[50].Id)
                {
                    throw new InvalidOperationException($"worker failure at {id}");
                }
            },
        });

        var failure = await Assert.ThrowsAsync<InvalidOperationException>(() => index.BuildAsync(new KeyedBatchSource(documents, 900, 10)).WaitAsync(HangGuard));

        Assert.Equal($"worker failure at {documents[50].Id}", failure.Message);
        Assert.Equal(IndexState.Idle, index.State);
    }

    [Fact]
    public async Task ResumeBuild_TheCommitHoldsFewerDocumentsThanItsKeyRecorded_IsRefused()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(300));
        await BulkCommitTests.InterruptBehindASlowBatchAsync(environment, documents);
        var directory = environment.IndexDirectory();
        var recorded = LuceneIndexSink.ReadLastCommit(directory)!.Value;
        Assert.Equal(documents[19].Id, recorded.BuildIndexedThrough);
        Assert.Equal(20, recorded.BuildIndexedCount);

        // The same commit, but claiming one document more through the key than it holds (what a bulk
        // commit beside a worker's failed flush could record).
        var sink = LuceneIndexSink.Open(directory, IndexTestEnvironment.Orders, new IndexOptions());
        sink.Commit(recorded with { BuildIndexedCount = 21 });
        sink.Close(keepPending: true);

        var index = environment.OpenIndex();
        Assert.NotNull(index.InterruptedBuildKeyProblem());
        var refused = await Assert.ThrowsAsync<InvalidOperationException>(
            () => index.ResumeBuildAsync(new KeyedBatchSource(documents, 950, 10, startAfter: documents[19].Id)));
        Assert.Contains("it recorded 21 documents through", refused.Message, StringComparison.Ordinal);
        Assert.Contains("holds 20", refused.Message, StringComparison.Ordinal);

        // Starting over discards the interrupted build and ends complete.
        await index.BuildAsync(new KeyedBatchSource(documents, 950, 10)).WaitAsync(HangGuard);
        Assert.Equal(300, index.GetStatus().DocumentCount);
    }

    // The commit a reopened index stands on claims nothing it lacks: complete at the snapshot with
    // every document, or an interrupted build whose key covers only documents it holds.
    internal static void AssertClaimsOnlyWhatItHolds(DocumentIndex index, List<PrefetchedDocument> documents, long snapshotEtag)
    {
        var status = index.GetStatus();
        if (!status.BuildInterrupted)
        {
            Assert.Equal(snapshotEtag, status.CommittedEtag);
            Assert.Equal(documents.Count, status.DocumentCount);
            return;
        }

        Assert.Equal(0, status.CommittedEtag);
        if (status.BuildIndexedThrough is { } key)
        {
            var through = documents.Count(d => DocumentIds.CompareKeyOrder(d.Id, key) <= 0);
            Assert.Equal(through, index.CountDocumentsThrough(key));
        }
    }

    private static IndexOptions Faulty(FaultPlan plan, IndexOptions options) => options with
    {
        OpenSink = (path, definition, opened) => LuceneIndexSink.Open(path, definition, opened, at => new FaultyDirectory(FSDirectory.Open(at), plan)),
    };
}
