namespace Indexing.Indexer.Tests.Index;

// __etag is indexed with one full-precision term per document (no trie terms): exact values and
// ranges on it must still find the documents with those etags.
public sealed class EtagQueryTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Query_OnEtag_ExactValuesAndRanges_FindTheDocumentsWithThoseEtags()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex();
        // The source numbers the documents' etags 1..100.
        await index.BuildAsync(IndexTestEnvironment.Source(IndexTestEnvironment.Generate(100), snapshotEtag: 100)).WaitAsync(HangGuard);

        var exact = index.Query(new IndexQuery("__etag:37"));
        Assert.Equal(37, Assert.Single(exact.Hits).Etag);
        Assert.Equal(11, index.Query(new IndexQuery("__etag:[40 TO 50]")).TotalHits);
        Assert.Equal(9, index.Query(new IndexQuery("__etag:{40 TO 50}")).TotalHits);
        Assert.Equal(10, index.Query(new IndexQuery("__etag:{90 TO *]")).TotalHits);
        Assert.Equal(5, index.Query(new IndexQuery("__etag:[* TO 5]")).TotalHits);
        Assert.Equal(0, index.Query(new IndexQuery("__etag:[101 TO *]")).TotalHits);
    }
}
