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
        Assert.Equal(12_000, server.Host.Indexes.Query("numbered", new IndexQuery("*:*")).TotalHits);
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
