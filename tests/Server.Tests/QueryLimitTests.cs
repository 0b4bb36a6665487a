using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Indexing.Indexer;
using Indexing.Server.Hosting;

namespace Indexing.Server.Tests;

/// <summary>
/// The server's bounds on queries: a time limit per query (503 problem details, the index keeps
/// answering), a cap on queries at once (429 with Retry-After), a cap on how far a pattern expands
/// (400), and documents streamed with the hits instead of read whole before the first byte.
/// </summary>
public sealed class QueryLimitTests
{
    private const string NumberedDefinition = """
        {"name": "numbered", "collection": "orders", "fields": [{"name": "n", "path": "n", "type": "long", "sortable": true}]}
        """;

    // 300 documents of 200 KB: an answer with their documents is 60 MB, far more than the socket
    // buffers between server and client (a few MB here), so a client that stops reading holds the
    // server's query where it is.
    private const int LargeCount = 300;
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Query_PastServerQueryTimeout_Answers503ProblemAndTheIndexKeepsAnswering()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.QueryTimeoutSetting] = "1ms" });
        for (var i = 0; i < 12_000; i++)
        {
            server.Store.Put($"orders/{i:D5}", $$"""{"n": {{i}}}""");
        }

        await server.DefineIndexAsync(NumberedDefinition, 12_000);

        // Loading 10,000 hits' stored fields alone takes far more than a millisecond on any machine.
        using var response = await server.Client.GetAsync("/indexes/numbered/query?q=*:*&take=10000&sort=-n");

        var problem = await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.ServiceUnavailable, "was stopped at its time limit of 1 ms");
        Assert.Equal("Query time limit exceeded", problem.GetProperty("title").GetString());
        Assert.Contains("The limit is Server:QueryTimeout.", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.Equal(12_000, server.Host.Engine.Indexes.Query("numbered", new IndexQuery("*:*")).TotalHits);
    }

    [Fact]
    public async Task Query_PatternExpandingPastMaxQueryTerms_Answers400NamingTheSetting()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxQueryTermsSetting] = "10" });
        for (var i = 0; i < 20; i++)
        {
            server.Store.Put($"orders/{i:D2}", $$"""{"n": {{i}}}""");
        }

        await server.DefineIndexAsync(NumberedDefinition, 20);

        using var broad = await server.Client.GetAsync("/indexes/numbered/query?q=__id:orders*");
        var problem = await DocumentEndpointTests.AssertProblem(broad, HttpStatusCode.BadRequest, "prefix '__id:orders*' matches more than 10 distinct terms");
        Assert.Equal("Query too broad", problem.GetProperty("title").GetString());
        Assert.Contains("Server:MaxQueryTerms", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);

        var narrow = await server.GetJsonAsync("/indexes/numbered/query?q=__id:orders%5C/1*");
        Assert.Equal(10, narrow.GetProperty("totalHits").GetInt64());
    }

    [Fact]
    public async Task Query_SortKeyRepeated_Answers400NamingTheFieldOrTheCount()
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"n": 1}""");
        await server.DefineIndexAsync(NumberedDefinition, 1);

        // The measured attack: an 8 KB query of one key 3,300 times, on the deepest page.
        var keys = string.Join(',', Enumerable.Repeat("n", 3_300));
        using var repeated = await server.Client.GetAsync($"/indexes/numbered/query?q=*:*&skip=90000&take=10000&sort={keys}");

        var problem = await DocumentEndpointTests.AssertProblem(repeated, HttpStatusCode.BadRequest, "the query has 3,300 sort keys; at most 8 are allowed");
        Assert.Equal("Invalid query", problem.GetProperty("title").GetString());
        using var twice = await server.Client.GetAsync("/indexes/numbered/query?q=*:*&sort=n,-n");
        problem = await DocumentEndpointTests.AssertProblem(twice, HttpStatusCode.BadRequest, "sort field 'n' is given twice (keys 1 and 2); each field may be a sort key once");
        Assert.Equal("Invalid query", problem.GetProperty("title").GetString());
        var once = await server.GetJsonAsync("/indexes/numbered/query?q=*:*&skip=90000&take=10000&sort=-n");
        Assert.Equal(1, once.GetProperty("totalHits").GetInt64());
        Assert.Equal(0, once.GetProperty("hits").GetArrayLength());
    }

    [Theory]
    [InlineData(null, 9, 8)]
    [InlineData("3", 4, 3)]
    public async Task Query_MoreSortKeysThanServerMaxSortKeys_Answers400NamingTheSetting(string? setting, int keys, int limit)
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxSortKeysSetting] = setting });
        var fields = Enumerable.Range(0, 9).Select(i => $"f{i}").ToList();
        server.Store.Put("orders/1", "{" + string.Join(", ", fields.Select(f => $"\"{f}\": \"v\"")) + "}");
        await server.DefineIndexAsync(
            """{"name": "wide", "collection": "orders", "fields": [""" +
            string.Join(", ", fields.Select(f => $$"""{"name": "{{f}}", "path": "{{f}}", "type": "keyword", "sortable": true}""")) + "]}",
            1);

        using var many = await server.Client.GetAsync($"/indexes/wide/query?q=*:*&sort={string.Join(',', fields.Take(keys))}");

        var problem = await DocumentEndpointTests.AssertProblem(many, HttpStatusCode.BadRequest, $"the query has {keys} sort keys; at most {limit} are allowed");
        Assert.EndsWith("The limit is Server:MaxSortKeys.", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        var atLimit = await server.GetJsonAsync($"/indexes/wide/query?q=*:*&sort={string.Join(',', fields.Take(limit))}");
        Assert.Equal(1, atLimit.GetProperty("totalHits").GetInt64());
    }

    [Fact]
    public async Task Query_NestedPastTheLimit_Answers400SyntaxErrorAtTheOpeningPastIt()
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"n": 1}""");
        await server.DefineIndexAsync(NumberedDefinition, 1);

        var deep = Uri.EscapeDataString(new string('(', 101) + "n:1" + new string(')', 101));
        using var response = await server.Client.GetAsync($"/indexes/numbered/query?q={deep}");

        var problem = await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.BadRequest, "nests 101 levels deep; at most 100 levels of parentheses and brackets are allowed");
        Assert.Equal("Query syntax error", problem.GetProperty("title").GetString());
        Assert.Equal(101, problem.GetProperty("column").GetInt32());
        var atLimit = await server.GetJsonAsync($"/indexes/numbered/query?q={Uri.EscapeDataString(new string('(', 100) + "n:1" + new string(')', 100))}");
        Assert.Equal(1, atLimit.GetProperty("totalHits").GetInt64());
    }

    [Fact]
    public async Task Query_PastMaxConcurrentQueries_Answers429WithRetryAfter()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.MaxConcurrentQueriesSetting] = "1",
            [ServerOptions.QueryQueueLengthSetting] = "0",
        });
        await LoadLargeAsync(server);
        using var timeout = new CancellationTokenSource(_hangGuard);

        // The first query holds the only permit for as long as its answer is unread.
        var holding = await server.Client.GetAsync(
            $"/indexes/numbered/query?q=*:*&take={LargeCount}&sort=n&include=docs", HttpCompletionOption.ResponseHeadersRead, timeout.Token);
        try
        {
            Assert.Equal(HttpStatusCode.OK, holding.StatusCode);
            using var refused = await server.Client.GetAsync("/indexes/numbered/query?q=n:1", timeout.Token);

            var problem = await DocumentEndpointTests.AssertProblem(refused, HttpStatusCode.TooManyRequests, "1 queries are running and 0 waiting");
            Assert.Equal("1", refused.Headers.GetValues("Retry-After").Single());
            Assert.Contains("Server:MaxConcurrentQueries", problem.GetProperty("detail").GetString(), StringComparison.Ordinal);
        }
        finally
        {
            // Leaving ends the first query (its next flush fails) and frees the permit.
            holding.Dispose();
        }

        HttpStatusCode status;
        do
        {
            await Task.Delay(50, timeout.Token);
            using var again = await server.Client.GetAsync("/indexes/numbered/query?q=n:1", timeout.Token);
            status = again.StatusCode;
        }
        while (status == HttpStatusCode.TooManyRequests);

        Assert.Equal(HttpStatusCode.OK, status);
    }

    [Fact]
    public async Task Query_IncludeDocs_DocumentsAreReadAsTheAnswerIsWrittenNotBeforeIt()
    {
        await using var server = await RunningServer.StartAsync();
        await LoadLargeAsync(server);
        using var timeout = new CancellationTokenSource(_hangGuard);

        using var response = await server.Client.GetAsync(
            $"/indexes/numbered/query?q=*:*&take={LargeCount}&sort=n&include=docs", HttpCompletionOption.ResponseHeadersRead, timeout.Token);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        await using var body = await response.Content.ReadAsStreamAsync(timeout.Token);
        var start = new byte[64 << 10];
        await body.ReadExactlyAsync(start, timeout.Token);

        // The server is at most the socket buffers (a few MB) ahead of this client: the last
        // document, 60 MB in, is not read yet. A server that read every document before answering
        // would still send it.
        var last = $"orders/{LargeCount - 1:D3}";
        Assert.NotNull(server.Store.Delete(last));
        using var rest = new MemoryStream();
        rest.Write(start);
        await body.CopyToAsync(rest, timeout.Token);

        var answer = JsonDocument.Parse(rest.ToArray()).RootElement;
        var hits = answer.GetProperty("hits").EnumerateArray().ToList();
        Assert.Equal(LargeCount, hits.Count);
        Assert.Equal("orders/000", hits[0].GetProperty("id").GetString());
        Assert.Equal(0, hits[0].GetProperty("document").GetProperty("n").GetInt32());
        Assert.Equal(last, hits[^1].GetProperty("id").GetString());
        Assert.Equal(JsonValueKind.Null, hits[^1].GetProperty("document").ValueKind);
    }

    private static async Task LoadLargeAsync(RunningServer server)
    {
        var pad = new string('p', 200_000);
        for (var i = 0; i < LargeCount; i++)
        {
            server.Store.Put($"orders/{i:D3}", $$"""{"n": {{i}}, "pad": "{{pad}}"}""");
        }

        await server.DefineIndexAsync(NumberedDefinition, LargeCount);
    }
}
