using Lucene.Net.Store;

namespace Indexing.Indexer.Tests.Index;

// A refresh flushes what the writer buffered; when that flush fails, Lucene drops the documents it
// held, which the index had already counted as applied. No commit may then record the applied etag:
// not one made by another thread between the failure and the rollback, nor the one Dispose makes
// when the failure comes as the index closes.
public sealed class RefreshFailureTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task CatchUp_ItsRefreshFails_ACommitFromAnotherThreadCannotRecordTheDroppedDocuments()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        var plan = new FaultPlan();
        var documents = IndexTestEnvironment.Generate(200);
        environment.Put(documents.Take(100));
        var index = environment.OpenIndex(options: Options(plan, refreshInterval: TimeSpan.FromSeconds(10)));
        index.CatchUp(store);
        index.Commit();

        environment.Put(documents.Skip(100));
        // While the refresh's flush fails, another thread commits (as the follower or a swap would).
        Task? commit = null;
        plan.FailNext(FlushWrite, onFault: () =>
        {
            commit = Task.Run(() =>
            {
                try
                {
                    index.Commit();
                }
                catch (IndexWriteException)
                {
                    // Refused or failed: either way nothing false is committed.
                }
            });
            Thread.Sleep(1000); // it cannot finish before the flush's outcome
        });
        Assert.Throws<IndexWriteException>(() => index.CatchUp(store));
        Assert.Equal(1, plan.Failures);
        await commit!.WaitAsync(HangGuard);

        // Space is back: the index catches up from its last true commit and holds every document.
        index.CatchUp(store);
        AssertNothingMissing(index, store, documents.Count);
        index.Commit();
        index.Dispose();
        AssertNothingMissing(environment.OpenIndex(options: new IndexOptions()), store, documents.Count, catchUp: true);
    }

    [Fact]
    public void Dispose_TheRefreshLoopFailsAsTheIndexCloses_TheCloseCommitsNothingOverTheDroppedDocuments()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        var plan = new FaultPlan();
        var documents = IndexTestEnvironment.Generate(200);
        environment.Put(documents.Take(100));
        var index = environment.OpenIndex(options: Options(plan, refreshInterval: TimeSpan.FromSeconds(3)));
        index.CatchUp(store);
        index.Commit();
        index.StartFollowing(store);
        environment.Put(documents.Skip(100));
        IndexTestEnvironment.WaitUntil(() => index.GetStatus().AppliedEtag == store.LastEtag, HangGuard, "the follower to apply every change");

        // The refresh loop's next flush (within 3 s) fails, but only once Dispose has begun.
        using var inFault = new ManualResetEventSlim();
        using var disposing = new ManualResetEventSlim();
        plan.FailNext(FlushWrite, onFault: () =>
        {
            inFault.Set();
            disposing.Wait(HangGuard);
            Thread.Sleep(200);
        });
        Assert.True(inFault.Wait(HangGuard), "the refresh loop never flushed");
        disposing.Set();
        index.Dispose();
        Assert.Equal(1, plan.Failures);

        AssertNothingMissing(environment.OpenIndex(options: new IndexOptions()), store, documents.Count, catchUp: true);
    }

    private static bool FlushWrite(FileOperation operation, string file) =>
        operation == FileOperation.Write && file.EndsWith(".tim", StringComparison.Ordinal);

    private static void AssertNothingMissing(DocumentIndex index, Storage.DocumentStore store, int documents, bool catchUp = false)
    {
        if (catchUp)
        {
            index.CatchUp(store);
        }

        var verdict = index.Verify(store);
        Assert.True(verdict.IsConsistent, $"missing {verdict.Missing}, extra {verdict.Extra}, stale {verdict.Stale}, duplicates {verdict.Duplicates}");
        Assert.Equal(documents, index.GetStatus().DocumentCount);
    }

    // Commits only when the test asks; refreshes as given.
    private static IndexOptions Options(FaultPlan plan, TimeSpan refreshInterval) => new()
    {
        CommitInterval = TimeSpan.FromHours(1),
        RefreshInterval = refreshInterval,
        FollowPollInterval = TimeSpan.FromMilliseconds(10),
        RamBufferSizeMB = 64,
        OpenSink = (path, definition, options) => LuceneIndexSink.Open(path, definition, options, at => new FaultyDirectory(FSDirectory.Open(at), plan)),
    };
}
