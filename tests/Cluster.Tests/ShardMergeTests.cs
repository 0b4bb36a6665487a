using System.Text;
using System.Text.Json;
using Indexing.Engine;
using Indexing.Indexer;
using Indexing.Storage;

namespace Indexing.Cluster.Tests;

// The merge of the shards' pages: its comparison rules on their own, then against real engines (one
// holding every document, three holding the buckets of one shard each).
public sealed class ShardMergeTests
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);

    // A sort value for a document without one; as a variable, one element of Hit's params array.
    private static readonly object? Missing = null;

    [Fact]
    public void CompareSortValues_Keywords_AsUtf8Bytes_NotUtf16()
    {
        // U+1F600 is a surrogate pair in UTF-16 (D83D DE00, before E000) but F0 9F 98 80 in UTF-8 (after EE 80 80).
        Assert.True(string.CompareOrdinal("\U0001F600", "\uE000") < 0);
        Assert.True(ShardMerge.CompareSortValues(["k"], ["\U0001F600"], ["\uE000"]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["k"], ["\U0001F600"], ["\uFFFD"]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["k"], ["Z"], ["a"]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["k"], ["é"], ["z"]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["k"], ["ab"], ["abc"]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["k"], [""], ["a"]) < 0);
        Assert.Equal(0, ShardMerge.CompareSortValues(["k"], ["\U0001F600"], ["\U0001F600"]));

        var merged = ShardMerge.Merge(
            new IndexQuery("*:*") { Sort = ["k"], Take = 10 },
            [Page(Hit("a", "\uE000"), Hit("b", "\uFFFD")), Page(Hit("c", "\U0001F600")), Page(Hit("d", "~"))]);
        Assert.Equal(["d", "a", "b", "c"], Ids(merged));
    }

    [Fact]
    public void CompareSortValues_MissingKeyword_FirstAscending_LastDescending()
    {
        Assert.True(ShardMerge.CompareSortValues(["k"], [null], [""]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["-k"], [null], ["a"]) > 0);
        Assert.Equal(0, ShardMerge.CompareSortValues(["k"], [null], [null]));

        var shards = new[] { Page(Hit("a", Missing), Hit("b", "m")), Page(Hit("c", Missing), Hit("d", "a")) };
        Assert.Equal(["a", "c", "d", "b"], Ids(ShardMerge.Merge(new IndexQuery("*:*") { Sort = ["k"] }, shards)));
        var descending = new[] { Page(Hit("b", "m"), Hit("a", Missing)), Page(Hit("d", "a"), Hit("c", Missing)) };
        Assert.Equal(["b", "d", "a", "c"], Ids(ShardMerge.Merge(new IndexQuery("*:*") { Sort = ["-k"] }, descending)));
    }

    [Fact]
    public void CompareSortValues_Numbers_Numerically_DoublesAsJava_LongsAndDoublesExactly()
    {
        Assert.True(ShardMerge.CompareSortValues(["n"], [-5L], [3L]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [long.MinValue], [long.MaxValue]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["-n"], [-5L], [3L]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [10.5], [9.75]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [-0.0], [0.0]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [double.MaxValue], [double.NaN]) < 0);
        Assert.Equal(0, ShardMerge.CompareSortValues(["n"], [2.5], [2.5]));

        // A double field's 3.0 may reach the merge as 3 (JSON): compared exactly, not through a rounded double.
        Assert.Equal(0, ShardMerge.CompareSortValues(["n"], [3L], [3.0]));
        Assert.True(ShardMerge.CompareSortValues(["n"], [3L], [3.5]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [-3L], [-3.5]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [(1L << 53) + 1], [(double)(1L << 53)]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [long.MaxValue], [9.2233720368547758E18]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["n"], [4.5], [4L]) > 0);
    }

    [Fact]
    public void CompareSortValues_SeveralKeys_TheNextKeyBreaksTheTie()
    {
        Assert.True(ShardMerge.CompareSortValues(["s", "-n"], ["a", 1L], ["a", 2L]) > 0);
        Assert.True(ShardMerge.CompareSortValues(["s", "-n"], ["a", 1L], ["b", 2L]) < 0);
        Assert.True(ShardMerge.CompareSortValues(["-s", "n"], [null, 1L], ["a", 0L]) > 0);
        Assert.Equal(0, ShardMerge.CompareSortValues(["s", "n"], ["a", 1.5], ["a", 1.5]));
        Assert.Equal(0, ShardMerge.CompareSortValues([], [], []));
    }

    [Fact]
    public void Merge_Ties_KeepShardOrderThenEachShardsOwnOrder_AndPagesSkipAndTake()
    {
        // Every hit ties on the key: the merge is stable (shard 0's hits, then shard 1's, ...).
        QueryResult[] shards =
        [
            Page(Hit("s0-a", 1L), Hit("s0-b", 1L), Hit("s0-c", 2L)),
            Page(Hit("s1-a", 1L), Hit("s1-b", 2L)),
            Page(Hit("s2-a", 0L), Hit("s2-b", 1L)),
        ];
        var query = new IndexQuery("*:*") { Sort = ["n"], Take = 10 };

        var all = ShardMerge.Merge(query, shards);

        Assert.Equal(7, all.TotalHits);
        Assert.Equal(["s2-a", "s0-a", "s0-b", "s1-a", "s2-b", "s0-c", "s1-b"], Ids(all));
        var page = ShardMerge.Merge(query with { Skip = 2, Take = 3 }, shards);
        Assert.Equal(7, page.TotalHits);
        Assert.Equal(["s0-b", "s1-a", "s2-b"], Ids(page));
        Assert.Empty(ShardMerge.Merge(query with { Skip = 7, Take = 3 }, shards).Hits);
        Assert.Empty(ShardMerge.Merge(query, []).Hits);
    }

    [Fact]
    public void Merge_ByRelevance_ScoresDescending_TiesInShardOrder()
    {
        QueryResult[] shards =
        [
            Page(Scored("a", 2.5f), Scored("b", 1f), Scored("c", 1f)),
            Page(Scored("d", 3f), Scored("e", 1f)),
            Page(),
        ];

        var merged = ShardMerge.Merge(new IndexQuery("body:x") { Take = 4 }, shards);

        Assert.Equal(5, merged.TotalHits);
        Assert.Equal(["d", "a", "b", "c"], Ids(merged));
    }

    [Fact]
    public void Merge_AShardMayStopAtThePagesDepth_OrReturnMore()
    {
        var query = new IndexQuery("*:*") { Sort = ["n"], Skip = 1, Take = 2 };
        var asked = ShardMerge.ShardQuery(query);
        Assert.Equal((0, 3, "*:*"), (asked.Skip, asked.Take, asked.Text));
        Assert.Same(query.Sort, asked.Sort);

        // Totals beyond the returned hits: each shard returned its first skip + take.
        var merged = ShardMerge.Merge(query, [Page(40, Hit("a", 1L), Hit("b", 4L), Hit("c", 5L), Hit("x", 6L)), Page(2, Hit("d", 2L), Hit("e", 3L))]);

        Assert.Equal(42, merged.TotalHits);
        Assert.Equal(["d", "e"], Ids(merged));
    }

    public static TheoryData<string[], QueryResult[], string> BadAnswers => new()
    {
        { ["n"], [Page(Hit("a", 1L)), Page(Hit("b", 1L, 2L))], "shard 1's hit 0 ('b') has 2 sort values; the query has 1 sort keys (n)" },
        { [], [Page(Hit("a", 1L))], "shard 0's hit 0 ('a') has 1 sort values; the query has 0 sort keys" },
        { ["n"], [Page(Hit("a", 1L)), Page(Hit("b", "x"))], "sort key 'n' holds a number in shard 0's hit 0 ('a') and a string in shard 1's hit 0 ('b')" },
        { ["n"], [Page(Hit("a", 1L), Hit("b", Missing))], "sort key 'n' holds a number in shard 0's hit 0 ('a') and null in shard 0's hit 1 ('b')" },
        { ["n"], [Page(Hit("a", 1L)), Page(Hit("b", 1m))], "shard 1's hit 0 ('b')'s value of sort key 'n' is a Decimal" },
        { ["n"], [Page(Hit("a", 2L), Hit("b", 1L))], "shard 0's hits 0 ('a', sort values [2]) and 1 ('b', sort values [1]) are out of the query's order" },
        { ["-n"], [Page(), Page(Hit("a", 1L), Hit("b", 2L))], "shard 1's hits 0 ('a', sort values [1]) and 1 ('b', sort values [2]) are out of the query's order" },
        { [], [Page(Scored("a", 1f), Scored("b", 2f))], "shard 0's hits 0 ('a', score 1) and 1 ('b', score 2) are out of the query's order" },
        { [], [Page(Scored("a", float.NaN))], "shard 0's hit 0 ('a') has a score that is not a number" },
        { ["n"], [Page(5, Hit("a", 1L))], "shard 0 returned 1 hits of its 5; the page needs its first 3" },
        { ["n"], [Page(1, Hit("a", 1L), Hit("b", 2L))], "shard 0 returned 2 hits of a total of 1" },
        { ["-"], [Page()], "sort key 1 is '-'" },
    };

    [Theory]
    [MemberData(nameof(BadAnswers))]
    public void Merge_AnAnswerThatCannotBeMerged_ThrowsNamingTheShardAndHit(string[] sort, QueryResult[] shards, string expected)
    {
        var error = Assert.ThrowsAny<ArgumentException>(() => ShardMerge.Merge(new IndexQuery("*:*") { Sort = sort, Take = 3 }, shards));
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ShardQuery_DeeperThanOneShardAnswer_Throws()
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => ShardMerge.ShardQuery(new IndexQuery("*:*") { Skip = 9_995, Take = 10 }));
        Assert.Contains("at most 10,000 hits deep", error.Message, StringComparison.Ordinal);
        Assert.Equal(10_000, ShardMerge.ShardQuery(new IndexQuery("*:*") { Skip = 9_990, Take = 10 }).Take);
    }

    // Three engines each holding one shard's buckets answer like one engine holding every document:
    // page by page, for sorts whose keys are unique per document (a tie in one engine is broken by its
    // Lucene doc id, which no merge reproduces); for relevance, the same total and hits, scores in order.
    [Fact]
    public async Task Merge_OfThreeShardEngines_PagesAsOneEngine()
    {
        const int Shards = 3;
        const int Buckets = 64;
        const string Name = "orders-sorted";
        var documents = Documents(300);
        using var root = new TempDirectory("indexing-cluster-merge-tests");
        var single = IndexingEngine.Open(Options(root.Combine("single")));
        await using var closeSingle = single;
        var shards = new IndexingEngine[Shards];
        var closers = new List<IAsyncDisposable>();
        try
        {
            for (var shard = 0; shard < Shards; shard++)
            {
                shards[shard] = IndexingEngine.Open(Options(root.Combine($"shard-{shard}")));
                closers.Add(shards[shard]);
            }

            single.PutMany(documents);
            for (var shard = 0; shard < Shards; shard++)
            {
                var mine = documents.Where(d => BucketHash.Of(d.Id, Buckets) % Shards == shard).ToList();
                Assert.InRange(mine.Count, 60, 140);
                shards[shard].PutMany(mine);
            }

            var definition = IndexDefinition.Parse("""
                { "name": "orders-sorted", "collection": "orders", "fields": [
                  { "name": "name", "path": "name", "type": "keyword", "sortable": true },
                  { "name": "tag", "path": "tag", "type": "keyword", "sortable": true },
                  { "name": "code", "path": "code", "type": "long", "sortable": true },
                  { "name": "rank", "path": "rank", "type": "long", "sortable": true },
                  { "name": "price", "path": "price", "type": "double", "sortable": true },
                  { "name": "body", "path": "body", "type": "text" }
                ] }
                """);
            IndexingEngine[] engines = [single, .. shards];
            foreach (var engine in engines)
            {
                engine.DefineIndex(definition);
            }

            foreach (var engine in engines)
            {
                await engine.WaitForRebuildAsync(Name).WaitAsync(_hangGuard);
            }

            await WaitUntilAsync(() => engines.Sum(e => e.Query(Name, new IndexQuery("*:*")).TotalHits) == 2 * documents.Count);

            string[][] sorts =
            [
                ["name"],              // keyword, unique, with characters above U+FFFF and in U+E000..U+FFFF
                ["-price"],            // double descending, unique
                ["tag", "-price"],     // two keys; tag missing (null, first) in some documents
                ["-tag", "code"],      // missing tags last; code a unique long
                ["rank", "name"],      // a long some documents lack: they sort as 0, amid the others
                ["-code"],             // a unique long of large magnitude, descending
            ];
            foreach (var sort in sorts)
            {
                var expectedAll = single.Query(Name, new IndexQuery("*:*") { Sort = sort, Take = documents.Count });
                Assert.Equal(documents.Count, expectedAll.Hits.Count);
                for (var skip = 0; skip < documents.Count + 7; skip += 7)
                {
                    var query = new IndexQuery("*:*") { Sort = sort, Skip = skip, Take = 7 };
                    var expected = single.Query(Name, query);
                    var merged = ShardMerge.Merge(query, [.. shards.Select(s => s.Query(Name, ShardMerge.ShardQuery(query)))]);

                    Assert.Equal(expected.TotalHits, merged.TotalHits);
                    Assert.True(
                        Ids(expected).SequenceEqual(Ids(merged)),
                        $"sort {string.Join(',', sort)}, skip {skip}: one engine [{string.Join(", ", Ids(expected))}], merged [{string.Join(", ", Ids(merged))}]");
                    for (var i = 0; i < merged.Hits.Count; i++)
                    {
                        Assert.Equal(expected.Hits[i].SortValues, merged.Hits[i].SortValues);
                    }
                }
            }

            // Relevance: per-shard statistics, so the order may differ from one engine's; the set may not.
            foreach (var text in new[] { "body:alpha", "body:(beta gamma)", "body:delta AND tag:red" })
            {
                var expectedAll = single.Query(Name, new IndexQuery(text) { Take = documents.Count });
                var mergedIds = new List<string>();
                var scores = new List<float>();
                for (var skip = 0; skip < expectedAll.TotalHits + 7; skip += 7)
                {
                    var query = new IndexQuery(text) { Skip = skip, Take = 7 };
                    var merged = ShardMerge.Merge(query, [.. shards.Select(s => s.Query(Name, ShardMerge.ShardQuery(query)))]);
                    Assert.Equal(expectedAll.TotalHits, merged.TotalHits);
                    Assert.All(merged.Hits, h => Assert.Empty(h.SortValues));
                    mergedIds.AddRange(Ids(merged));
                    scores.AddRange(merged.Hits.Select(h => h.Score));
                }

                Assert.True(expectedAll.TotalHits > 7, $"{text} matches {expectedAll.TotalHits}, within one page");
                Assert.Equal(mergedIds.Count, mergedIds.Distinct(StringComparer.Ordinal).Count());
                Assert.Equal(Ids(expectedAll).Order(StringComparer.Ordinal), mergedIds.Order(StringComparer.Ordinal));
                for (var i = 1; i < scores.Count; i++)
                {
                    Assert.True(scores[i - 1] >= scores[i], $"{text}: score {scores[i]} after {scores[i - 1]} at {i}");
                }
            }
        }
        finally
        {
            foreach (var closer in closers)
            {
                await closer.DisposeAsync();
            }
        }
    }

    private static EngineOptions Options(string dataDirectory) => new()
    {
        DataDirectory = dataDirectory,
        Storage = new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20),
        Indexes = new IndexOptions { RefreshInterval = TimeSpan.FromMilliseconds(50), FollowPollInterval = TimeSpan.FromMilliseconds(20), SwapLagEtags = 50 },
    };

    // Orders with unique name, code and price; a tag (five values, some above U+FFFF) in about 60% of
    // them and a rank (-5..5, so many ties) in about 70%; a body of words for relevance.
    private static List<DocumentWrite> Documents(int count)
    {
        var random = new Random(20_261_202);
        string[] namePrefixes = ["a", "Z", "é", "\uE000", "\uFFFD", "\U0001F600", "\U0001F600\uE000", "m"];
        string[] tags = ["red", "green", "blue", "\U0001F69A", "\uE123"];
        string[] words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
        var codes = Enumerable.Range(0, count).OrderBy(_ => random.Next()).ToArray();
        var prices = Enumerable.Range(0, count).OrderBy(_ => random.Next()).ToArray();
        var documents = new List<DocumentWrite>(count);
        for (var i = 0; i < count; i++)
        {
            var fields = new Dictionary<string, object>
            {
                ["name"] = $"{namePrefixes[random.Next(namePrefixes.Length)]}{i:D3}",
                ["code"] = (codes[i] - (count / 2)) * 31_415_926_535_897L,
                ["price"] = (prices[i] - (count / 3)) * 0.25 + 0.125,
                ["body"] = string.Join(' ', Enumerable.Range(0, 1 + random.Next(8)).Select(_ => words[random.Next(random.Next(2) == 0 ? 3 : words.Length)])),
            };
            if (random.Next(10) < 6)
            {
                fields["tag"] = tags[random.Next(tags.Length)];
            }

            if (random.Next(10) < 7)
            {
                fields["rank"] = random.Next(-5, 6);
            }

            documents.Add(new DocumentWrite($"orders/{i:D4}", Encoding.UTF8.GetBytes(JsonSerializer.Serialize(fields))));
        }

        return documents;
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + _hangGuard;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "the indexes did not see every document in time");
            await Task.Delay(50);
        }
    }

    private static QueryHit Hit(string id, params object?[] sortValues) => new(id, 1f, 1) { SortValues = sortValues };

    private static QueryHit Scored(string id, float score) => new(id, score, 1);

    private static QueryResult Page(params QueryHit[] hits) => new(hits.Length, hits);

    private static QueryResult Page(long totalHits, params QueryHit[] hits) => new(totalHits, hits);

    private static List<string> Ids(QueryResult result) => [.. result.Hits.Select(h => h.Id)];
}
