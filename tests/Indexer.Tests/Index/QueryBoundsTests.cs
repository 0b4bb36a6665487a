using System.Text;

using Indexing.Prefetcher;

namespace Indexing.Indexer.Tests.Index;

/// <summary>
/// Prefix, wildcard, regular-expression and fuzzy terms: they match what they say, they expand at
/// most <see cref="IndexQuery.MaxExpandedTerms"/> terms, patterns whose automaton would explode are
/// answered at once or refused, and a query past its time limit stops and leaves the searcher free.
/// </summary>
public sealed class QueryBoundsTests : IClassFixture<QueryBoundsTests.CodesIndex>
{
    // Pathological patterns finish in milliseconds here; Lucene's own automata took minutes for them.
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(30);

    private readonly CodesIndex _built;

    public QueryBoundsTests(CodesIndex built)
    {
        _built = built;
    }

    private DocumentIndex Index => _built.Index;

    [Theory]
    [InlineData("code:item-001*", "^item-001")]
    [InlineData("code:item-0?1?", "^item-0.1.$")]
    [InlineData("code:item-1*5", "^item-1.*5$")]
    [InlineData(@"code:item\-00*7", "^item-00.*7$")]
    [InlineData("code:/item-00[0-4]7/", "^item-00[0-4]7$")]
    [InlineData("code:/item-2(1|2)\\d+/", "^item-2(1|2)[0-9]+$")]
    [InlineData("code:/item-0+1/", "^item-0+1$")]
    public void Query_PrefixWildcardOrRegex_MatchesTheTermsThePatternDescribes(string query, string expected)
    {
        var result = Index.Query(new IndexQuery(query) { Take = 1000 });

        var expectedCodes = CodesIndex.Codes.Where(c => System.Text.RegularExpressions.Regex.IsMatch(c, expected)).Order(StringComparer.Ordinal).ToList();
        Assert.NotEmpty(expectedCodes);
        Assert.Equal(expectedCodes.Count, result.TotalHits);
        Assert.Equal(expectedCodes, result.Hits.Select(h => CodesIndex.Codes[int.Parse(h.Id.Split('/')[1])]).Order(StringComparer.Ordinal));
    }

    [Fact]
    public void Query_RegexOnTextField_IgnoresCaseLikeTheAnalyser()
    {
        var result = Index.Query(new IndexQuery("title:/SHIP[0-2]PED/") { Take = 1000 });

        Assert.Equal(CodesIndex.Codes.Count(c => int.Parse(c[5..]) % 7 <= 2), result.TotalHits);
    }

    [Fact]
    public void Query_Fuzzy_FindsTermsWithinTheEditDistance()
    {
        var result = Index.Query(new IndexQuery("code:item-0001~1") { Take = 100 });
        var codes = result.Hits.Select(h => CodesIndex.Codes[int.Parse(h.Id.Split('/')[1])]).ToHashSet();

        Assert.Contains("item-0001", codes);
        Assert.Contains("item-0002", codes);   // one substitution
        Assert.Contains("item-0010", codes);   // one transposition
        Assert.DoesNotContain("item-0022", codes);
        Assert.True(result.TotalHits <= IndexQuery.MaxFuzzyExpansions, $"{result.TotalHits} hits from at most {IndexQuery.MaxFuzzyExpansions} terms");
    }

    [Theory]
    [InlineData("code:item-00*", "prefix 'code:item-00*'", 100)]
    [InlineData("code:item-?0*", "wildcard 'code:item-?0*'", 300)]
    [InlineData("code:/item-1.*/", "regular expression 'code:/item-1.*/'", 1000)]
    public void Query_PatternMatchingMoreTermsThanAllowed_ThrowsQueryExpansionExceptionNamingIt(string query, string described, int terms)
    {
        var error = Assert.Throws<QueryExpansionException>(() => Index.Query(new IndexQuery(query) { MaxExpandedTerms = terms - 1 }));

        Assert.Equal(terms - 1, error.Limit);
        Assert.Contains($"{described} matches more than {terms - 1} distinct terms", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, Index.SearcherReferencesHeld);
        // The same pattern within the limit runs (one matching document per term).
        Assert.Equal(terms, Index.Query(new IndexQuery(query) { MaxExpandedTerms = terms }).TotalHits);
    }

    [Theory]
    [InlineData("code:x*a????????????????????")]          // Lucene.Net's WildcardQuery: 2^21 automaton states
    [InlineData("code:item-0*a????????????????????")]
    [InlineData("code:/item-0[a0]*a[a0]{20}/")]           // Lucene.Net's RegexpQuery: the same explosion
    public async Task Query_PatternWhoseAutomatonWouldExplode_AnsweredAtOnce(string query)
    {
        var result = await Task.Run(() => Index.Query(new IndexQuery(query))).WaitAsync(_hangGuard);

        Assert.Equal(0, result.TotalHits);
    }

    [Theory]
    [InlineData("code:/.*7/", "does not begin with a literal character")]
    [InlineData("code:/[a-z]+-0001/", "does not begin with a literal character")]
    [InlineData("code:/item|x/", "does not begin with a literal character")]
    [InlineData("code:/item(a{100}){100}/", "larger than the configured limit")]
    [InlineData("code:/item-(\\d)\\1/", "backreference")]
    [InlineData("code:/item-(/", "is not a valid regular expression at character")]
    public void Query_RegexTheEngineRefuses_ThrowsInvalidQueryExceptionSayingWhy(string query, string expected)
    {
        var error = Assert.Throws<InvalidQueryException>(() => Index.Query(new IndexQuery(query)));

        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
        Assert.Contains("on field 'code': ", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("*:*")]
    [InlineData("code:item-*")]
    [InlineData("code:/item-.*/")]
    public void Query_PastItsTimeLimit_ThrowsQueryTimeoutAndLeavesTheSearcherFree(string query)
    {
        // One tick: spent by the time the query reaches its first check, whatever the machine.
        var limit = TimeSpan.FromTicks(1);

        var error = Assert.Throws<QueryTimeoutException>(() => Index.Query(new IndexQuery(query) { TimeLimit = limit }));

        Assert.Equal(limit, error.Limit);
        Assert.Contains("was stopped at its time limit of 0.0001 ms", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, Index.SearcherReferencesHeld);
        Assert.Equal(CodesIndex.Codes.Length, Index.Query(new IndexQuery("*:*") { TimeLimit = TimeSpan.FromMinutes(1) }).TotalHits);
    }

    [Fact]
    public void Query_CancelledByTheCaller_ThrowsOperationCanceledAndLeavesTheSearcherFree()
    {
        using var cancelled = new CancellationTokenSource();
        cancelled.Cancel();

        Assert.ThrowsAny<OperationCanceledException>(() => Index.Query(new IndexQuery("*:*"), cancelled.Token));
        Assert.Equal(0, Index.SearcherReferencesHeld);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(IndexQuery.MaxExpandedTermsLimit + 1)]
    public void Query_ExpansionLimitOutOfRange_Refused(int limit)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => Index.Query(new IndexQuery("*:*") { MaxExpandedTerms = limit }));
        Assert.Contains($"MaxExpandedTerms is {limit}; it must be from 1 to {IndexQuery.MaxExpandedTermsLimit}", error.Message, StringComparison.Ordinal);
    }

    // 3,000 documents, each with a distinct keyword code "item-0000".."item-2999" and a title whose
    // second word is "ship<n mod 7>ped", so patterns over either have counts the test can compute.
    public sealed class CodesIndex : IDisposable
    {
        public static readonly string[] Codes = [.. Enumerable.Range(0, 3000).Select(i => $"item-{i:D4}")];

        private const string Definition = """
            { "name": "codes", "collection": "codes", "fields": [
              { "name": "code", "path": "code", "type": "keyword" },
              { "name": "title", "path": "title", "type": "text" }
            ] }
            """;

        private readonly IndexTestEnvironment _environment = new(withStore: false);

        public CodesIndex()
        {
            Index = _environment.OpenIndex(IndexDefinition.Parse(Definition));
            var documents = Codes.Select((code, i) => new PrefetchedDocument(
                $"codes/{i}", i + 1, Encoding.UTF8.GetBytes($$"""{"code": "{{code}}", "title": "Parcel Ship{{i % 7}}ped today"}""")));
            Index.BuildAsync(new MemoryBatchSource([.. documents], Codes.Length)).WaitAsync(TimeSpan.FromMinutes(2)).GetAwaiter().GetResult();
        }

        internal DocumentIndex Index { get; }

        public void Dispose() => _environment.Dispose();
    }
}
