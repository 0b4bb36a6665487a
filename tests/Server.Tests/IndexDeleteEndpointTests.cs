using System.Net;
using System.Net.Http.Json;
using System.Text.Json;

using Indexing.Server.Hosting;

namespace Indexing.Server.Tests;

// DELETE /indexes/{name}: a write, so it needs the full API key; 200 with what was deleted, then
// the index answers 404 and its name can be defined again.
public sealed class IndexDeleteEndpointTests
{
    private const string Key = "0123456789abcdef-test-key";
    private const string ReadKey = "fedcba9876543210-read-key";
    private const string Definition = """{"name": "by-a", "collection": "orders", "fields": [{"name": "a", "path": "a", "type": "long", "sortable": true}]}""";

    [Fact]
    public async Task DeleteIndex_NeedsTheFullKey_ThenAnswers200_AndTheIndexIs404()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.ApiKeySetting] = Key,
            [ServerOptions.ReadApiKeySetting] = ReadKey,
        });
        server.Store.Put("orders/1", """{"a": 1}""");
        await server.DefineIndexAsync(Definition, documents: 1);

        using var withoutKey = await SendDeleteAsync(server, "/indexes/by-a", key: null);
        using var withReadKey = await SendDeleteAsync(server, "/indexes/by-a", ReadKey);
        Assert.Equal(["by-a"], server.Host.Engine.Indexes.Names);
        using var deleted = await SendDeleteAsync(server, "/indexes/by-a", Key);
        using var again = await SendDeleteAsync(server, "/indexes/by-a", Key);
        using var badName = await SendDeleteAsync(server, "/indexes/..%2Fstore", Key);
        using var summary = await SendAsync(server, HttpMethod.Get, "/indexes/by-a", Key);

        await DocumentEndpointTests.AssertProblem(withoutKey, HttpStatusCode.Unauthorized, "needs an API key (Server:ApiKey");
        await DocumentEndpointTests.AssertProblem(withReadKey, HttpStatusCode.Forbidden, "read-only key");
        Assert.Equal(HttpStatusCode.OK, deleted.StatusCode);
        var body = await deleted.Content.ReadFromJsonAsync<JsonElement>();
        Assert.Equal("by-a", body.GetProperty("name").GetString());
        Assert.Equal(1, body.GetProperty("generation").GetInt32());
        await DocumentEndpointTests.AssertProblem(again, HttpStatusCode.NotFound, "there is no index named 'by-a'");
        await DocumentEndpointTests.AssertProblem(badName, HttpStatusCode.BadRequest, "index name '..");
        Assert.Equal(HttpStatusCode.NotFound, summary.StatusCode);
        Assert.Empty(server.Host.Engine.Indexes.Names);
        Assert.False(Directory.Exists(Path.Combine(server.Directory, "indexes", "by-a")));
    }

    private static Task<HttpResponseMessage> SendDeleteAsync(RunningServer server, string path, string? key) => SendAsync(server, HttpMethod.Delete, path, key);

    private static async Task<HttpResponseMessage> SendAsync(RunningServer server, HttpMethod method, string path, string? key)
    {
        using var request = new HttpRequestMessage(method, path);
        if (key is not null)
        {
            request.Headers.Add("X-Api-Key", key);
        }

        return await server.Client.SendAsync(request);
    }
}
