using System.Text;

using Indexing.Prefetcher;

namespace Indexing.Indexer.Tests.Index;

/// <summary>
/// What a query's shape may cost before it finds anything: its sort keys (each field once, at most
/// <see cref="IndexQuery.MaxSortKeys"/>), its page window (never more slots than the index has
/// documents) and its nesting (at most <see cref="IndexQuery.MaxNestingDepth"/>, refused before parsing).
/// </summary>
public sealed class QueryShapeLimitTests : IDisposable
{
    private const string Definition = """
        { "name": "one", "collection": "orders", "fields": [
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "total", "path": "total", "type": "double", "sortable": true },
          { "name": "n", "path": "n", "type": "long", "sortable": true }
        ] }
        """;

    private readonly IndexTestEnvironment _environment = new(withStore: false);
    private readonly DocumentIndex _index;

    public QueryShapeLimitTests()
    {
        _index = _environment.OpenIndex(IndexDefinition.Parse(Definition));
        var document = new PrefetchedDocument("orders/1", 1, Encoding.UTF8.GetBytes("""{"status": "shipped", "total": 12.5, "n": 1}"""));
        _index.BuildAsync(new MemoryBatchSource([document], 1)).WaitAsync(TimeSpan.FromMinutes(1)).GetAwaiter().GetResult();
    }

    public void Dispose() => _environment.Dispose();

    [Fact]
    public void Query_SameSortFieldTwice_ThrowsInvalidQueryNamingTheFieldAndTheKeys()
    {
        var query = new IndexQuery("*:*") { Sort = ["status", "total", "-status"] };

        var error = Assert.Throws<InvalidQueryException>(() => _index.Query(query));

        Assert.Equal("index 'one': sort field 'status' is given twice (keys 1 and 3); each field may be a sort key once. Remove the repeated key.", error.Message);
        Assert.Equal(0, _index.SearcherReferencesHeld);
    }

    [Fact]
    public void Query_MoreSortKeysThanMaxSortKeys_ThrowsInvalidQueryNamingTheCountAndTheLimit()
    {
        string[] keys = ["status", "total", "n"];

        var error = Assert.Throws<InvalidQueryException>(() => _index.Query(new IndexQuery("*:*") { Sort = keys, MaxSortKeys = 2 }));

        Assert.Equal("index 'one': the query has 3 sort keys; at most 2 are allowed (MaxSortKeys). Sort by fewer fields.", error.Message);
        Assert.Equal(1, _index.Query(new IndexQuery("*:*") { Sort = keys, MaxSortKeys = 3 }).TotalHits);
        Assert.Equal(IndexQuery.DefaultMaxSortKeys, new IndexQuery("*:*").MaxSortKeys);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(IndexQuery.MaxSortKeysLimit + 1)]
    public void Query_MaxSortKeysOutOfRange_Refused(int limit)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => _index.Query(new IndexQuery("*:*") { MaxSortKeys = limit }));
        Assert.Contains($"MaxSortKeys is {limit}; it must be from 1 to {IndexQuery.MaxSortKeysLimit}", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Query_DeepPageOfAOneDocumentIndex_AllocatesForItsDocumentNotForTheWindow(bool sorted)
    {
        var query = new IndexQuery("*:*") { Skip = 90_000, Take = 10_000, Sort = sorted ? ["status", "n"] : [] };
        _index.Query(query); // warm: the first query loads the doc values and the sort's caches

        var before = GC.GetAllocatedBytesForCurrentThread();
        var result = _index.Query(query);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(1, result.TotalHits);
        Assert.Empty(result.Hits);
        // A window of 100,000 slots is a 100,001-entry queue and, per sort key, arrays of 100,000
        // values: megabytes. One document's window is a few hundred bytes beside the parse.
        Assert.True(allocated < 256 << 10, $"the query allocated {allocated:N0} bytes");
        Assert.Equal("orders/1", Assert.Single(_index.Query(query with { Skip = 0, Take = 10_000 }).Hits).Id);
    }

    [Fact]
    public void Query_NestedDeeperThanTheLimit_ThrowsSyntaxAtTheOpeningPastItBeforeParsing()
    {
        var limit = IndexQuery.MaxNestingDepth;
        var deep = new string('(', limit) + "n:[1 TO 2]" + new string(')', limit);
        var atLimit = new string('(', limit) + "status:shipped" + new string(')', limit);

        var error = Assert.Throws<QuerySyntaxException>(() => _index.Query(new IndexQuery(deep)));

        Assert.Equal(limit + 3, error.Column);
        Assert.Contains($"this '[' nests {limit + 1} levels deep; at most {limit} levels of parentheses and brackets are allowed", error.Problem, StringComparison.Ordinal);
        Assert.Null(error.InnerException);
        Assert.Equal(1, _index.Query(new IndexQuery(atLimit)).TotalHits);
        // Brackets in a phrase or escaped do not nest.
        var phrase = new string('(', limit) + "status:\"((((\"" + new string(')', limit);
        Assert.Equal(0, _index.Query(new IndexQuery(phrase)).TotalHits);
        Assert.Equal(0, _index.Query(new IndexQuery(@"status:\(\(\(x")).TotalHits);
    }
}
