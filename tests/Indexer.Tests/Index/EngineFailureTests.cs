using Lucene.Net.Store;

namespace Indexing.Indexer.Tests.Index;

// The disk fails under the IndexWriter (a FaultyDirectory throws on a write or an fsync). Lucene
// then drops the documents the failed flush had buffered, so an index that went on from its applied
// etag would commit a checkpoint over documents it no longer holds. It must roll back to its last
// commit and apply the change feed again from there: verify finds nothing missing, before and after
// a reopen.
public sealed class EngineFailureTests
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(30);

    [Fact]
    public void Following_AWriteFailsWhileDocumentsAreBuffered_RollsBackAndReplays_NothingIsMissing()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        FaultyDirectory? directory = null;
        var options = Options(path => directory = new FaultyDirectory(FSDirectory.Open(path)));
        var documents = IndexTestEnvironment.Generate(600);
        environment.Put(documents.Take(100));
        var index = environment.OpenIndex(options: options);
        index.CatchUp(store);
        index.Commit();
        index.StartFollowing(store);

        // Applied and buffered in the writer's memory (no refresh, no commit yet) ...
        environment.Put(documents.Skip(100).Take(100));
        WaitUntilApplied(index, store);
        // ... then a write fails while more documents are added: Lucene aborts the buffer.
        directory!.Plan.FailNext((operation, _) => operation == FileOperation.Write);
        environment.Put(documents.Skip(200));
        IndexTestEnvironment.WaitUntil(() => directory.Failures > 0, _hangGuard, "the injected write failure");

        WaitUntilApplied(index, store);
        AssertNothingMissing(environment, index, documents.Count);
    }

    [Theory]
    [InlineData("write")]
    [InlineData("fsync")]
    public void Commit_TheDiskFails_RollsBackAndReplays_NothingIsMissing(string fault)
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        FaultyDirectory? directory = null;
        var options = Options(path => directory = new FaultyDirectory(FSDirectory.Open(path)));
        var documents = IndexTestEnvironment.Generate(200);
        environment.Put(documents.Take(100));
        var index = environment.OpenIndex(options: options);
        index.CatchUp(store);
        index.Commit();
        index.StartFollowing(store);
        environment.Put(documents.Skip(100));
        WaitUntilApplied(index, store);

        if (fault == "write")
        {
            directory!.Plan.FailNext((operation, _) => operation == FileOperation.Write);
        }
        else
        {
            directory!.Plan.FailNext((operation, _) => operation == FileOperation.Sync);
        }

        var failure = Assert.Throws<IndexWriteException>(index.Commit);
        Assert.Contains("injected", failure.Message, StringComparison.Ordinal);

        WaitUntilApplied(index, store);
        AssertNothingMissing(environment, index, documents.Count);
    }

    // Commits come only when the test asks; refreshes (which flush too) rarely.
    private static IndexOptions Options(Func<string, Lucene.Net.Store.Directory> openDirectory) => new()
    {
        CommitInterval = TimeSpan.FromHours(1),
        RefreshInterval = TimeSpan.FromSeconds(10),
        FollowPollInterval = TimeSpan.FromMilliseconds(10),
        RamBufferSizeMB = 64,
        OpenSink = (path, definition, options) => LuceneIndexSink.Open(path, definition, options, openDirectory),
    };

    private static void WaitUntilApplied(DocumentIndex index, Storage.DocumentStore store) =>
        IndexTestEnvironment.WaitUntil(
            () => index.GetStatus().AppliedEtag == store.LastEtag || index.State == IndexState.Error,
            _hangGuard,
            "the follower to apply every change");

    // Verify on the live index, then commit, reopen without faults and verify what the commit holds.
    private static void AssertNothingMissing(IndexTestEnvironment environment, DocumentIndex index, int documents)
    {
        var store = environment.RequireStore;
        var status = index.GetStatus();
        Assert.NotEqual(IndexState.Error, status.State);
        Assert.Equal(1, status.Rollbacks);
        Assert.Contains("rolled back to the last commit", status.LastError, StringComparison.Ordinal);
        var live = index.Verify(store);
        Assert.True(live.IsConsistent, $"live: missing {live.Missing}, extra {live.Extra}, stale {live.Stale}, duplicates {live.Duplicates}");
        Assert.Equal(documents, live.StoreDocuments);

        index.Commit();
        index.Dispose();
        var reopened = environment.OpenIndex(options: new IndexOptions(), name: "index");
        Assert.Equal(store.LastEtag, reopened.GetStatus().CommittedEtag);
        var committed = reopened.Verify(store);
        Assert.True(committed.IsConsistent, $"after reopen: missing {committed.Missing}, extra {committed.Extra}, stale {committed.Stale}, duplicates {committed.Duplicates}");
        Assert.Equal(documents, reopened.GetStatus().DocumentCount);
    }
}
