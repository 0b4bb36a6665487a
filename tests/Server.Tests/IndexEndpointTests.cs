using System.Net;
using System.Net.Http.Json;
using System.Text.Json;

namespace Indexing.Server.Tests;

public sealed class IndexEndpointTests
{
    private const string Definition = """
        {"name": "orders-by-status", "collection": "orders", "fields": [
          {"name": "status", "path": "status", "type": "keyword"},
          {"name": "total", "path": "total", "type": "long", "sortable": true}
        ]}
        """;

    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Define_ThenQuery_HitsSortedPagedWithDocuments()
    {
        await using var server = await RunningServer.StartAsync();
        for (var i = 1; i <= 30; i++)
        {
            server.Store.Put($"orders/{i:D2}", $$"""{"status": "{{(i % 3 == 0 ? "shipped" : "open")}}", "total": {{i * 10}}}""");
        }

        using (var created = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json(Definition)))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
            var body = await created.Content.ReadFromJsonAsync<JsonElement>();
            Assert.Equal("created", body.GetProperty("result").GetString());
        }

        using (var again = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json(Definition)))
        {
            // The same definition again starts nothing: unchanged (200), or the first build still running (202).
            var body = await again.Content.ReadFromJsonAsync<JsonElement>();
            Assert.True((again.StatusCode, body.GetProperty("result").GetString()) is (HttpStatusCode.OK, "unchanged") or (HttpStatusCode.Accepted, "rebuildRunning"),
                $"{again.StatusCode} {body}");
        }

        // The index is built in the background: poll the query until it sees all ten shipped orders.
        JsonElement result;
        using var timeout = new CancellationTokenSource(_hangGuard);
        do
        {
            await Task.Delay(50, timeout.Token);
            result = await server.GetJsonAsync("/indexes/orders-by-status/query?q=status:shipped&take=3&skip=1&sort=-total&include=docs");
        }
        while (result.GetProperty("totalHits").GetInt64() < 10);

        Assert.Equal(10, result.GetProperty("totalHits").GetInt64());
        var hits = result.GetProperty("hits").EnumerateArray().ToList();
        Assert.Equal(["orders/27", "orders/24", "orders/21"], hits.Select(h => h.GetProperty("id").GetString()));
        Assert.Equal(270, hits[0].GetProperty("document").GetProperty("total").GetInt64());
        Assert.Equal([270L, 240L, 210L], hits.Select(h => h.GetProperty("sort").EnumerateArray().Single().GetInt64()));

        // Relevance order: no sort values to show.
        var withoutDocs = await server.GetJsonAsync("/indexes/orders-by-status/query?q=status:shipped&take=1");
        Assert.Equal(JsonValueKind.Null, withoutDocs.GetProperty("hits")[0].GetProperty("document").ValueKind);
        Assert.False(withoutDocs.GetProperty("hits")[0].TryGetProperty("sort", out _));

        var summary = await server.GetJsonAsync("/indexes/orders-by-status");
        Assert.Equal("orders", summary.GetProperty("collection").GetString());
        Assert.False(string.IsNullOrEmpty(summary.GetProperty("definitionHash").GetString()));
        var list = await server.GetJsonAsync("/indexes");
        Assert.Equal(["orders-by-status"], list.GetProperty("indexes").EnumerateArray().Select(i => i.GetProperty("name").GetString()));
    }

    [Fact]
    public async Task Query_Sorted_EachHitHasItsSortValues_StringsNumbersAndNullForAMissingKeyword()
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"status": "open", "total": 12.5, "items": 3}""");
        server.Store.Put("orders/2", """{"total": 7, "items": 1}""");
        server.Store.Put("orders/3", """{"status": "shipped \uD83D\uDE9A", "items": 2}""");
        const string definition = """
            {"name": "orders-sorted", "collection": "orders", "fields": [
              {"name": "status", "path": "status", "type": "keyword", "sortable": true},
              {"name": "total", "path": "total", "type": "double", "sortable": true},
              {"name": "items", "path": "items", "type": "long", "sortable": true}
            ]}
            """;
        using (var created = await server.Client.PutAsync("/indexes/orders-sorted", RunningServer.Json(definition)))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        JsonElement result;
        using var timeout = new CancellationTokenSource(_hangGuard);
        do
        {
            await Task.Delay(50, timeout.Token);
            result = await server.GetJsonAsync("/indexes/orders-sorted/query?q=*:*&sort=status,-total,items");
        }
        while (result.GetProperty("totalHits").GetInt64() < 3);

        var hits = result.GetProperty("hits").EnumerateArray().ToList();
        Assert.Equal(["orders/2", "orders/1", "orders/3"], hits.Select(h => h.GetProperty("id").GetString()));
        // A keyword the document lacks is null (and sorts first); a double it lacks is 0, as the index sorted it.
        Assert.Equal("""[null,7,1]""", hits[0].GetProperty("sort").GetRawText());
        Assert.Equal("""["open",12.5,3]""", hits[1].GetProperty("sort").GetRawText());
        Assert.Equal("shipped \U0001F69A", hits[2].GetProperty("sort")[0].GetString());
        Assert.Equal(0, hits[2].GetProperty("sort")[1].GetDouble());
        Assert.Equal(2, hits[2].GetProperty("sort")[2].GetInt64());
    }

    public static TheoryData<string, string, HttpStatusCode, string> BadRequests => new()
    {
        { "PUT", "/indexes/a%2Fb", HttpStatusCode.BadRequest, "index name 'a" },
        { "PUT", "/indexes/a/b", HttpStatusCode.BadRequest, "index name 'a/b'" },
        { "PUT", "/indexes/", HttpStatusCode.BadRequest, "index name ''" },
        { "GET", "/indexes/..%2Fstore", HttpStatusCode.BadRequest, "index name '.." },
        { "GET", "/indexes/nope", HttpStatusCode.NotFound, "no index named 'nope'" },
        { "GET", "/indexes/nope/query?q=*:*", HttpStatusCode.NotFound, "no index named 'nope'" },
        { "GET", "/indexes/orders-by-status/query?q=status:(open", HttpStatusCode.BadRequest, "is not valid at character" },
        { "GET", "/indexes/orders-by-status/query?q=", HttpStatusCode.BadRequest, "q is missing or empty" },
        { "GET", "/indexes/orders-by-status/query?q=*:*&take=lots", HttpStatusCode.BadRequest, "take is 'lots'" },
        { "GET", "/indexes/orders-by-status/query?q=*:*&take=0", HttpStatusCode.BadRequest, "Take is 0; it must be from 1 to 10000" },
        { "GET", "/indexes/orders-by-status/query?q=*:*&include=everything", HttpStatusCode.BadRequest, "include is 'everything'" },
        { "GET", "/indexes/orders-by-status/query?q=*:*&sort=-", HttpStatusCode.BadRequest, "empty key" },
        { "GET", "/indexes/orders-by-status/query?q=*:*&sort=status", HttpStatusCode.BadRequest, "status" },
        { "GET", "/indexes/orders-by-status/query?q=*:*&limit=5", HttpStatusCode.BadRequest, "unknown query parameter 'limit'" },
    };

    [Theory]
    [MemberData(nameof(BadRequests))]
    public async Task Request_Bad_ProblemNamingTheValueAndNothingChanges(string method, string path, HttpStatusCode status, string detailPart)
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"status": "open", "total": 1}""");
        using (var created = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json(Definition)))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        var etag = server.Store.LastEtag;
        using var request = new HttpRequestMessage(new HttpMethod(method), path) { Content = method == "PUT" ? RunningServer.Json(Definition) : null };
        using var response = await server.Client.SendAsync(request);

        var problem = await DocumentEndpointTests.AssertProblem(response, status, detailPart);
        if (detailPart == "is not valid at character")
        {
            Assert.True(problem.GetProperty("column").GetInt32() > 0);
        }

        Assert.Equal(["orders-by-status"], server.Host.Engine.Indexes.Names);
        Assert.Equal(etag, server.Store.LastEtag);
    }

    [Theory]
    [InlineData("""{"name": "orders-by-status", "collection": "orders", "fields": [{"name": "x", "path": "x", "type": "colour"}]}""", "colour")]
    [InlineData("""{"name": "other-name", "collection": "orders", "fields": [{"name": "x", "path": "x", "type": "keyword"}]}""", "named 'other-name' but was sent to /indexes/orders-by-status")]
    [InlineData("""{"name": "orders-by-status",""", "not well-formed JSON")]
    public async Task Put_BadDefinition_400AndNoIndexCreated(string definition, string detailPart)
    {
        await using var server = await RunningServer.StartAsync();
        using var response = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json(definition));
        await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.BadRequest, detailPart);
        Assert.Empty(server.Host.Engine.Indexes.Names);
    }
}
