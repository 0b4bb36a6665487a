using Indexing.Prefetcher;

namespace Indexing.Indexer.Tests.Index;

// What each hit carries of its sort keys (QueryHit.SortValues), as Lucene.Net 4.8's TopFieldCollector
// fills them: the values a merge of several indexes' pages has to compare by.
public sealed class SortValuesTests
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromMinutes(1);

    private static readonly IndexDefinition _definition = IndexDefinition.Parse("""
        { "name": "orders-sorted", "collection": "orders", "fields": [
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "itemCount", "path": "itemCount", "type": "long", "sortable": true },
          { "name": "total", "path": "total", "type": "double", "sortable": true },
          { "name": "paid", "path": "paid", "type": "bool", "sortable": true },
          { "name": "note", "path": "note", "type": "text" }
        ] }
        """);

    [Fact]
    public async Task Query_Sorted_EachHitHoldsItsSortValues_StringLongDoubleAndBoolAsLong()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        await index.BuildAsync(Source(
            ("orders/1", """{"status":"pending","itemCount":3,"total":12.5,"paid":true,"note":"blue"}"""),
            ("orders/2", """{"status":"\uD83D\uDE00 smile","itemCount":-7,"total":-0.25,"paid":false,"note":"blue"}"""),
            ("orders/3", """{"status":"new","itemCount":9000000000,"total":1e300,"paid":true,"note":"red"}"""))).WaitAsync(_hangGuard);

        var result = index.Query(new IndexQuery("*:*") { Sort = ["-itemCount", "status", "total", "paid"] });

        Assert.Equal(["orders/3", "orders/1", "orders/2"], result.Hits.Select(h => h.Id));
        Assert.Equal([9_000_000_000L, "new", 1e300, 1L], result.Hits[0].SortValues);
        Assert.Equal([3L, "pending", 12.5, 1L], result.Hits[1].SortValues);
        Assert.Equal([-7L, "\U0001F600 smile", -0.25, 0L], result.Hits[2].SortValues);
        Assert.IsType<long>(result.Hits[0].SortValues[0]);
        Assert.IsType<double>(result.Hits[0].SortValues[2]);
    }

    [Fact]
    public async Task Query_ByRelevance_HitsHoldNoSortValues()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        await index.BuildAsync(Source(("orders/1", """{"status":"new","note":"blue"}"""))).WaitAsync(_hangGuard);

        var hit = Assert.Single(index.Query(new IndexQuery("note:blue")).Hits);

        Assert.Empty(hit.SortValues);
    }

    // What Lucene.Net 4.8 does with a document that has no value for the sort field: a keyword
    // (STRING) sort gives null and puts it first ascending, last descending; a numeric sort (no
    // SortField.MissingValue set) compares and returns the doc values' 0, so it sorts as 0 would.
    [Fact]
    public async Task Query_SortFieldMissing_KeywordIsNullAndFirstAscending_NumbersAreZero()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        await index.BuildAsync(Source(
            ("orders/1", """{"status":"a","itemCount":5,"total":2.5,"paid":true}"""),
            ("orders/2", """{"note":"nothing to sort by"}"""),
            ("orders/3", """{"status":"","itemCount":-5,"total":-2.5,"paid":false}"""),
            ("orders/4", """{"status":"b","itemCount":6,"total":-0.0}"""))).WaitAsync(_hangGuard);

        var byStatus = index.Query(new IndexQuery("*:*") { Sort = ["status"] });
        Assert.Equal(["orders/2", "orders/3", "orders/1", "orders/4"], byStatus.Hits.Select(h => h.Id));
        Assert.Equal([null, "", "a", "b"], byStatus.Hits.Select(h => h.SortValues[0]));

        var byStatusDescending = index.Query(new IndexQuery("*:*") { Sort = ["-status"] });
        Assert.Equal(["orders/4", "orders/1", "orders/3", "orders/2"], byStatusDescending.Hits.Select(h => h.Id));

        var byCount = index.Query(new IndexQuery("*:*") { Sort = ["itemCount", "total", "paid"] });
        Assert.Equal(["orders/3", "orders/2", "orders/1", "orders/4"], byCount.Hits.Select(h => h.Id));
        Assert.Equal([0L, 0.0, 0L], byCount.Hits[1].SortValues);

        // Doubles compare as Java's Double.compare does: -0.0 before 0.0, so before a missing value.
        var byTotal = index.Query(new IndexQuery("*:*") { Sort = ["total"] });
        Assert.Equal(["orders/3", "orders/4", "orders/2", "orders/1"], byTotal.Hits.Select(h => h.Id));
        Assert.True(double.IsNegative((double)byTotal.Hits[1].SortValues[0]!));
        Assert.False(double.IsNegative((double)byTotal.Hits[2].SortValues[0]!));
    }

    private static MemoryBatchSource Source(params (string Id, string Json)[] documents)
    {
        var etag = 0L;
        return new MemoryBatchSource([.. documents.Select(d => new PrefetchedDocument(d.Id, ++etag, IndexTestEnvironment.Json(d.Json)))], etag);
    }
}
