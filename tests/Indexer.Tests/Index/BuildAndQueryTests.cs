using System.Globalization;

using Indexing.Datasets;

namespace Indexing.Indexer.Tests.Index;

public sealed class BuildAndQueryTests : IClassFixture<BuildAndQueryTests.BuiltIndex>
{
    private readonly BuiltIndex _built;

    public BuildAndQueryTests(BuiltIndex built)
    {
        _built = built;
    }

    private DocumentIndex Index => _built.Index;

    private List<GeneratedOrder> Orders => _built.Orders;

    [Fact]
    public void Build_GeneratedCollection_IndexesEveryDocumentAndCheckpointsTheSnapshotEtag()
    {
        var status = Index.GetStatus();
        Assert.Equal(Orders.Count, status.DocumentCount);
        Assert.Equal(BuiltIndex.SnapshotEtag, status.AppliedEtag);
        Assert.Equal(BuiltIndex.SnapshotEtag, status.CommittedEtag);
        Assert.False(status.BuildInterrupted);
        Assert.False(status.IsStale);
        Assert.Equal(0, status.FailedDocuments);
        Assert.Equal(Orders.Count, _built.BuildMetrics.Documents);
        Assert.True(_built.BuildMetrics.Bytes > 0);
        Assert.True(_built.BuildMetrics.Commits >= 2, "a build commits its start marker and its end");
        Assert.Equal(Orders.Count, Index.Query(new IndexQuery("*:*")).TotalHits);
    }

    [Fact]
    public void Query_KeywordTerm_MatchesExactly()
    {
        var status = Orders[0].Status;
        Assert.Equal(Orders.Count(o => o.Status == status), Index.Query(new IndexQuery($"status:{status}")).TotalHits);
        Assert.Equal(0, Index.Query(new IndexQuery($"status:{status.ToUpperInvariant()}")).TotalHits);
    }

    [Fact]
    public void Query_KeywordMultiValued_MatchesAnyValue()
    {
        var tag = Orders.SelectMany(o => o.Tags).First();
        Assert.Equal(Orders.Count(o => o.Tags.Contains(tag)), Index.Query(new IndexQuery($"tags:{tag}")).TotalHits);
    }

    [Fact]
    public void Query_TextWord_MatchesAnalysedText()
    {
        var word = Orders[0].Customer.Split(' ')[0];
        var expected = Orders.Count(o => o.Customer.Split(' ').Any(w => string.Equals(w, word, StringComparison.OrdinalIgnoreCase)));
        var result = Index.Query(new IndexQuery($"customer:{word.ToUpperInvariant()}") { Take = 1000 });
        Assert.Equal(expected, result.TotalHits);
        Assert.Contains(result.Hits, h => h.Id == Orders[0].Id);
    }

    [Theory]
    [InlineData("itemCount:[5 TO 10]", 5L, 10L, true, true)]
    [InlineData("itemCount:{5 TO 10}", 5L, 10L, false, false)]
    [InlineData("itemCount:[20 TO *]", 20L, long.MaxValue, true, true)]
    public void Query_LongRange_MatchesNumerically(string query, long min, long max, bool minInclusive, bool maxInclusive)
    {
        var expected = Orders.Count(o =>
            (minInclusive ? o.ItemCount >= min : o.ItemCount > min) && (maxInclusive ? o.ItemCount <= max : o.ItemCount < max));
        Assert.InRange(expected, 1, Orders.Count - 1);
        Assert.Equal(expected, Index.Query(new IndexQuery(query)).TotalHits);
    }

    [Fact]
    public void Query_LongTerm_MatchesTheValue()
    {
        var value = Orders[3].ItemCount;
        Assert.Equal(Orders.Count(o => o.ItemCount == value), Index.Query(new IndexQuery($"itemCount:{value}")).TotalHits);
    }

    [Fact]
    public void Query_DoubleRange_MatchesNumerically()
    {
        var totals = Orders.Select(o => o.Total).Order().ToList();
        var low = totals[totals.Count / 4];
        var high = totals[totals.Count * 3 / 4];
        var query = string.Create(CultureInfo.InvariantCulture, $"total:[{low:R} TO {high:R}]");
        Assert.Equal(Orders.Count(o => o.Total >= low && o.Total <= high), Index.Query(new IndexQuery(query)).TotalHits);
    }

    [Fact]
    public void Query_Bool_MatchesTrueAndFalse()
    {
        Assert.Equal(Orders.Count(o => o.Paid), Index.Query(new IndexQuery("paid:true")).TotalHits);
        Assert.Equal(Orders.Count(o => !o.Paid), Index.Query(new IndexQuery("paid:false")).TotalHits);
    }

    [Fact]
    public void Query_BooleanCombination_MatchesTheIntersection()
    {
        var status = Orders[0].Status;
        var expected = Orders.Count(o => o.Status == status && o.Paid && o.ItemCount >= 5);
        Assert.Equal(expected, Index.Query(new IndexQuery($"status:{status} AND paid:true AND itemCount:[5 TO *]")).TotalHits);
    }

    [Fact]
    public void Query_SortByDoubleDescending_OrdersByValue()
    {
        var result = Index.Query(new IndexQuery("*:*") { Take = 25, Sort = ["-total"] });
        var expected = Orders.OrderByDescending(o => o.Total).Take(25).Select(o => o.Total).ToList();
        Assert.Equal(expected, result.Hits.Select(h => TotalOf(h.Id)).ToList());
    }

    [Fact]
    public void Query_SortByKeywordThenLong_OrdersByBoth()
    {
        var result = Index.Query(new IndexQuery("*:*") { Take = 40, Sort = ["status", "-itemCount"] });
        var expected = Orders.OrderBy(o => o.Status, StringComparer.Ordinal).ThenByDescending(o => o.ItemCount).Take(40)
            .Select(o => (o.Status, o.ItemCount)).ToList();
        Assert.Equal(expected, result.Hits.Select(h => Orders.Single(o => o.Id == h.Id)).Select(o => (o.Status, o.ItemCount)).ToList());
    }

    [Fact]
    public void Query_Paging_ReturnsConsecutivePagesWithTheSameTotal()
    {
        string[] sort = ["total"];
        var all = Index.Query(new IndexQuery("*:*") { Take = 30, Sort = sort });
        var first = Index.Query(new IndexQuery("*:*") { Take = 10, Sort = sort });
        var second = Index.Query(new IndexQuery("*:*") { Take = 10, Skip = 10, Sort = sort });
        var beyond = Index.Query(new IndexQuery("*:*") { Take = 10, Skip = Orders.Count });
        Assert.Equal(Orders.Count, second.TotalHits);
        Assert.Equal(all.Hits.Take(10).Select(h => h.Id), first.Hits.Select(h => h.Id));
        Assert.Equal(all.Hits.Skip(10).Take(10).Select(h => h.Id), second.Hits.Select(h => h.Id));
        Assert.Empty(beyond.Hits);
        Assert.Equal(Orders.Count, beyond.TotalHits);
    }

    [Fact]
    public void Query_ById_FindsTheDocumentWithItsEtag()
    {
        var id = Orders[7].Id;
        var hit = Assert.Single(Index.Query(new IndexQuery($"__id:\"{id}\"")).Hits);
        Assert.Equal(id, hit.Id);
        Assert.Equal(8, hit.Etag);
    }

    [Theory]
    [InlineData("status:(shipped", 16)]
    [InlineData("total:[1 TO", 12)]
    [InlineData("customer:\"open phrase", 10)]
    [InlineData("AND status:shipped", 1)]
    [InlineData("status:shipped OR", 18)]
    [InlineData("status:a ) b", 10)]
    [InlineData("status:a^^2", 10)]
    public void Query_BadSyntax_ThrowsQuerySyntaxExceptionWithPosition(string text, int column)
    {
        var exception = Assert.Throws<QuerySyntaxException>(() => Index.Query(new IndexQuery(text)));
        Assert.Equal(text, exception.Query);
        Assert.Equal("orders-all", exception.IndexName);
        Assert.Equal(column, exception.Column);
        Assert.Contains($"'{text}'", exception.Message, StringComparison.Ordinal);
        Assert.Contains("orders-all", exception.Message, StringComparison.Ordinal);
        Assert.False(string.IsNullOrWhiteSpace(exception.Problem));
    }

    [Theory]
    [InlineData("color:red", "field 'color' is not in the index")]
    [InlineData("itemCount:many", "'many' is not a whole number for long field 'itemCount'")]
    [InlineData("itemCount:[1 TO ten]", "'ten' is not a whole number for long field 'itemCount'")]
    [InlineData("total:[cheap TO 5]", "'cheap' is not a finite number for double field 'total'")]
    [InlineData("paid:yes", "'yes' is not true or false for bool field 'paid'")]
    [InlineData("itemCount:1*", "a prefix query on field 'itemCount' (long) is not supported")]
    [InlineData("paid:[false TO true]", "field 'paid' is a bool field")]
    public void Query_InvalidForTheDefinition_ThrowsInvalidQueryException(string text, string expected)
    {
        var exception = Assert.Throws<InvalidQueryException>(() => Index.Query(new IndexQuery(text)));
        Assert.Contains(expected, exception.Message, StringComparison.Ordinal);
        Assert.Equal("orders-all", exception.IndexName);
    }

    [Theory]
    [InlineData("customer", "field 'customer' is not sortable; sortable fields: status, itemCount, total, paid.")]
    [InlineData("nope", "sort field 'nope' is not in the index")]
    public void Query_SortOnFieldThatCannotSort_ThrowsInvalidQueryException(string field, string expected)
    {
        var exception = Assert.Throws<InvalidQueryException>(() => Index.Query(new IndexQuery("*:*") { Sort = [field] }));
        Assert.Contains(expected, exception.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0, 0)]
    [InlineData(IndexQuery.MaxTake + 1, 0)]
    [InlineData(10, -1)]
    [InlineData(10, IndexQuery.MaxWindow)]
    public void Query_TakeOrSkipOutOfRange_ThrowsArgumentOutOfRange(int take, int skip)
    {
        var exception = Assert.Throws<ArgumentOutOfRangeException>(() => Index.Query(new IndexQuery("*:*") { Take = take, Skip = skip }));
        Assert.Contains(skip < 0 || skip >= IndexQuery.MaxWindow ? $"Skip is {skip}" : $"Take is {take}", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Build_IntoAnIndexThatHoldsDocuments_IsRefused()
    {
        var exception = await Assert.ThrowsAsync<InvalidOperationException>(() => Index.BuildAsync(IndexTestEnvironment.Source([])).WaitAsync(TimeSpan.FromMinutes(1)));
        Assert.Contains("already holds documents up to etag", exception.Message, StringComparison.Ordinal);
    }

    private double TotalOf(string id) => Orders.Single(o => o.Id == id).Total;

    // One index built once for the read-only tests of this class.
    public sealed class BuiltIndex : IDisposable
    {
        public const int Count = 600;
        public const long SnapshotEtag = 5000;

        private readonly IndexTestEnvironment _environment = new(withStore: false);

        public BuiltIndex()
        {
            var documents = IndexTestEnvironment.Generate(Count, DatasetShape.LogNormal);
            Orders = GeneratedOrder.From(documents);
            Index = _environment.OpenIndex(options: new IndexOptions { IndexingThreads = 2, TakeMaxDocuments = 64 });
            BuildMetrics = Index.BuildAsync(IndexTestEnvironment.Source(documents, SnapshotEtag))
                .WaitAsync(TimeSpan.FromMinutes(2)).GetAwaiter().GetResult();
        }

        internal List<GeneratedOrder> Orders { get; }

        internal DocumentIndex Index { get; }

        internal IndexMetrics BuildMetrics { get; }

        public void Dispose() => _environment.Dispose();
    }
}
