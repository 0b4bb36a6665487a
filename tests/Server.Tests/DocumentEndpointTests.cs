using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Indexing.Server.Hosting;

namespace Indexing.Server.Tests;

public sealed class DocumentEndpointTests
{
    [Fact]
    public async Task Put_NewThenReplace_CreatedThenOkWithEtagsAndGetReturnsLatestBody()
    {
        await using var server = await RunningServer.StartAsync();

        using var created = await server.Client.PutAsync("/docs/orders/17", RunningServer.Json("""{"total": 12.5}"""));
        Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        var first = await created.Content.ReadFromJsonAsync<JsonElement>();
        Assert.Equal("orders/17", first.GetProperty("id").GetString());
        Assert.Equal($"\"{first.GetProperty("etag").GetInt64()}\"", created.Headers.ETag!.Tag);

        using var replaced = await server.Client.PutAsync("/docs/orders/17", RunningServer.Json("""{"total": 13}"""));
        Assert.Equal(HttpStatusCode.OK, replaced.StatusCode);
        var second = await replaced.Content.ReadFromJsonAsync<JsonElement>();
        Assert.True(second.GetProperty("etag").GetInt64() > first.GetProperty("etag").GetInt64());

        using var read = await server.Client.GetAsync("/docs/orders/17");
        Assert.Equal(HttpStatusCode.OK, read.StatusCode);
        Assert.Equal("application/json", read.Content.Headers.ContentType!.MediaType);
        Assert.Equal("""{"total": 13}""", await read.Content.ReadAsStringAsync());
        Assert.Equal($"\"{second.GetProperty("etag").GetInt64()}\"", read.Headers.ETag!.Tag);
    }

    [Fact]
    public async Task Delete_Existing_GoneAfterwardsAndSecondDeleteIs404()
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("users/a/b", """{"name": "x"}""");

        using var deleted = await server.Client.DeleteAsync("/docs/users/a/b");
        Assert.Equal(HttpStatusCode.OK, deleted.StatusCode);
        Assert.Null(server.Store.Get("users/a/b"));

        using var again = await server.Client.DeleteAsync("/docs/users/a/b");
        await AssertProblem(again, HttpStatusCode.NotFound, "'users/a/b' does not exist");
        using var read = await server.Client.GetAsync("/docs/users/a/b");
        await AssertProblem(read, HttpStatusCode.NotFound, "'users/a/b' does not exist");
    }

    public static TheoryData<string, string, HttpStatusCode, string, string> BadPuts => new()
    {
        { "orders/1", """{"total": 1,}""", HttpStatusCode.BadRequest, "BodyMalformedJson", "not well-formed JSON at line 1" },
        { "orders/1", """{"total": """, HttpStatusCode.BadRequest, "BodyMalformedJson", "not well-formed JSON" },
        { "orders/1", "[1, 2]", HttpStatusCode.BadRequest, "BodyNotObject", "is an array, not a JSON object" },
        { "orders/1", "\"text\"", HttpStatusCode.BadRequest, "BodyNotObject", "is a string, not a JSON object" },
        { "orders/1", "", HttpStatusCode.BadRequest, "BodyMalformedJson", "not well-formed JSON" },
        { "orders/1", "{\"note\": \"" + new string('x', 5000) + "\"}", HttpStatusCode.RequestEntityTooLarge, "BodyTooLarge", "the limit is 4 KiB (Storage:MaxDocumentBytes)" },
        { "/orders/1", """{"a": 1}""", HttpStatusCode.BadRequest, "IdEmptyCollection", "'/orders/1'" },
        { "orders/%01x", """{"a": 1}""", HttpStatusCode.BadRequest, "IdControlCharacter", "'orders/\\u0001x'" },
        { "", """{"a": 1}""", HttpStatusCode.BadRequest, "IdEmpty", "empty" },
        { new string('k', 600), """{"a": 1}""", HttpStatusCode.BadRequest, "IdTooLong", "512" },
    };

    [Theory]
    [MemberData(nameof(BadPuts))]
    public async Task Put_BadInput_ProblemNamingValueAndRuleAndNothingChanges(string id, string body, HttpStatusCode status, string rule, string detailPart)
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxDocumentBytesSetting] = "4KiB" });
        server.Store.Put("orders/1", """{"original": true}""");
        var etag = server.Store.LastEtag;

        using var response = await server.Client.PutAsync("/docs/" + id, new StringContent(body, Encoding.UTF8, "application/json"));

        var problem = await AssertProblem(response, status, detailPart);
        Assert.Equal(rule, problem.GetProperty("rule").GetString());
        Assert.Equal(etag, server.Store.LastEtag);
        Assert.Equal("""{"original": true}""", Encoding.UTF8.GetString(server.Store.Get("orders/1")!.Value.Body));
    }

    [Fact]
    public async Task Put_ChunkedBodyOverLimit_413WithoutContentLengthAndNothingStored()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxDocumentBytesSetting] = "4KiB" });
        var body = "{\"note\": \"" + new string('x', 100_000) + "\"}";
        using var content = new StreamContent(new MemoryStream(Encoding.UTF8.GetBytes(body)));
        content.Headers.ContentType = new("application/json");
        using var request = new HttpRequestMessage(HttpMethod.Put, "/docs/orders/big") { Content = content };
        request.Headers.TransferEncodingChunked = true;

        using var response = await server.Client.SendAsync(request);

        await AssertProblem(response, HttpStatusCode.RequestEntityTooLarge, "more than 4 KiB");
        Assert.Equal(0, server.Store.LastEtag);
    }

    [Fact]
    public async Task Get_BadId_400NamingTheRule()
    {
        await using var server = await RunningServer.StartAsync();
        using var response = await server.Client.GetAsync("/docs/orders/%7F");
        var problem = await AssertProblem(response, HttpStatusCode.BadRequest, "'orders/\\u007F'");
        Assert.Equal("IdControlCharacter", problem.GetProperty("rule").GetString());
    }

    /// <summary>Checks the status, the problem+json content type and that the detail contains <paramref name="detailPart"/>.</summary>
    internal static async Task<JsonElement> AssertProblem(HttpResponseMessage response, HttpStatusCode status, string detailPart)
    {
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == status, $"expected {(int)status}, got {(int)response.StatusCode}: {text}");
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        var problem = JsonDocument.Parse(text).RootElement.Clone();
        Assert.Equal((int)status, problem.GetProperty("status").GetInt32());
        var detail = problem.GetProperty("detail").GetString()!;
        Assert.Contains(detailPart, detail, StringComparison.Ordinal);
        return problem;
    }
}
