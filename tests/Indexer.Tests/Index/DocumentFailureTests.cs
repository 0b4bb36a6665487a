using Indexing.Prefetcher;

namespace Indexing.Indexer.Tests.Index;

public sealed class DocumentFailureTests
{
    private static readonly IndexDefinition _definition = IndexDefinition.Parse("""
        { "name": "orders-small", "collection": "orders", "fields": [
          { "name": "status", "path": "status", "type": "keyword" },
          { "name": "itemCount", "path": "itemCount", "type": "long", "sortable": true },
          { "name": "note", "path": "note", "type": "text" }
        ] }
        """);

    [Fact]
    public async Task Build_FieldWithTheWrongType_IndexesTheDocumentWithoutThatFieldAndReportsIt()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        await index.BuildAsync(Source(
            ("orders/1", """{"status":"new","itemCount":3}"""),
            ("orders/2", """{"status":"new","itemCount":"many"}"""),
            ("orders/3", """{"status":"old","itemCount":7}""")));

        var status = index.GetStatus();
        Assert.Equal(3, status.DocumentCount);
        Assert.Equal(1, status.MismatchedValues);
        Assert.Equal(0, status.FailedDocuments);
        Assert.Contains("'orders/2'", status.LastMismatch, StringComparison.Ordinal);
        Assert.Contains("itemCount", status.LastMismatch, StringComparison.Ordinal);
        Assert.Equal(2, index.Query(new IndexQuery("status:new")).TotalHits);
        var withCount = index.Query(new IndexQuery("itemCount:[0 TO *]"));
        Assert.Equal(["orders/1", "orders/3"], withCount.Hits.Select(h => h.Id).Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task Build_BodyThatIsNotJson_IsCountedAndReportedAndTheRestIndexed()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        await index.BuildAsync(Source(
            ("orders/1", """{"status":"new"}"""),
            ("orders/2", """{"status": oops"""),
            ("orders/3", """{"status":"new"}""")));

        var status = index.GetStatus();
        Assert.Equal(2, status.DocumentCount);
        Assert.Equal(1, status.FailedDocuments);
        Assert.Contains("index 'orders-small', document 'orders/2'", status.LastDocumentFailure, StringComparison.Ordinal);
        Assert.Contains("not well-formed JSON", status.LastDocumentFailure, StringComparison.Ordinal);
        Assert.Equal(IndexState.Idle, status.State);
        Assert.Null(status.LastError);
    }

    [Fact]
    public async Task Build_DocumentTheEngineRefuses_IsCountedAndReportedAndTheRestIndexed()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        // Lucene refuses a single term over 32,766 bytes; a keyword value is one term.
        var immense = new string('x', 40_000);
        await index.BuildAsync(Source(
            ("orders/1", """{"status":"new"}"""),
            ("orders/2", $$"""{"status":"{{immense}}"}"""),
            ("orders/3", """{"status":"new"}""")));

        var status = index.GetStatus();
        Assert.Equal(2, status.DocumentCount);
        Assert.Equal(1, status.FailedDocuments);
        Assert.Contains("index 'orders-small', document 'orders/2': the search engine refused it", status.LastDocumentFailure, StringComparison.Ordinal);
        Assert.Equal(0, index.Query(new IndexQuery("__id:\"orders/2\"")).TotalHits);
    }

    [Fact]
    public async Task Build_DocumentOfAnotherCollection_IsSkipped()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        await index.BuildAsync(Source(("orders/1", """{"status":"new"}"""), ("customers/1", """{"status":"new"}""")));
        Assert.Equal(["orders/1"], index.Query(new IndexQuery("status:new")).Hits.Select(h => h.Id));
    }

    private static MemoryBatchSource Source(params (string Id, string Json)[] documents)
    {
        var etag = 0L;
        return new MemoryBatchSource([.. documents.Select(d => new PrefetchedDocument(d.Id, ++etag, IndexTestEnvironment.Json(d.Json)))], etag);
    }
}
