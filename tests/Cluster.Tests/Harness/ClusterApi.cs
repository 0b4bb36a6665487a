using System.Net;
using System.Text;
using System.Text.Json;

namespace Indexing.Cluster.Tests;

/// <summary>The cluster's HTTP API as the tests call it, on any node of a <see cref="ClusterNodes"/>.</summary>
internal static class ClusterApi
{
    // V1 indexes "status" from the documents' status property; V2 from their state property. The test
    // documents hold opposite values there, so a hit for status:a is a document with status "a" under
    // V1 and one with state "a" under V2: an answer that mixed generations would show both kinds.
    public const string V1 = """{"name": "orders", "collection": "orders", "fields": [{"name": "status", "path": "status", "type": "keyword", "sortable": true}, {"name": "total", "path": "total", "type": "long", "sortable": true}]}""";
    public const string V2 = """{"name": "orders", "collection": "orders", "fields": [{"name": "status", "path": "state", "type": "keyword", "sortable": true}, {"name": "total", "path": "total", "type": "long", "sortable": true}]}""";
    public const string V3 = """{"name": "orders", "collection": "orders", "fields": [{"name": "status", "path": "state", "type": "keyword", "sortable": true}, {"name": "total", "path": "total", "type": "double", "sortable": true}]}""";

    /// <summary>An order whose status and state are opposite ("a" and "b").</summary>
    public static string Order(long total, bool a) =>
        $$"""{"status": "{{(a ? "a" : "b")}}", "state": "{{(a ? "b" : "a")}}", "total": {{total}}}""";

    public static async Task<HttpResponseMessage> PutDocumentAsync(this ClusterNodes cluster, string node, string id, string json) =>
        await cluster.Http.PutAsync(new Uri(cluster.Url(node), "docs/" + id), new StringContent(json, Encoding.UTF8, "application/json"));

    public static async Task<(HttpStatusCode Status, string Body)> BulkAsync(this ClusterNodes cluster, string node, IEnumerable<(string Id, string Json)> documents)
    {
        var body = string.Concat(documents.Select(d => $$"""{"id": "{{d.Id}}", "doc": {{d.Json}}}""" + "\n"));
        using var response = await cluster.Http.PostAsync(new Uri(cluster.Url(node), "docs/bulk"), new StringContent(body, Encoding.UTF8, "application/x-ndjson"));
        return (response.StatusCode, await response.Content.ReadAsStringAsync());
    }

    public static async Task<(HttpStatusCode Status, string Body)> DefineAsync(this ClusterNodes cluster, string node, string definition)
    {
        using var response = await cluster.Http.PutAsync(new Uri(cluster.Url(node), "indexes/orders"), new StringContent(definition, Encoding.UTF8, "application/json"));
        return (response.StatusCode, await response.Content.ReadAsStringAsync());
    }

    public static async Task<(HttpStatusCode Status, JsonElement Body)> QueryAsync(this ClusterNodes cluster, string node, string query)
    {
        using var response = await cluster.Http.GetAsync(new Uri(cluster.Url(node), "indexes/orders/query?" + query));
        var text = await response.Content.ReadAsStringAsync();
        return (response.StatusCode, JsonDocument.Parse(text.Length == 0 ? "{}" : text).RootElement.Clone());
    }

    /// <summary>The cluster index as a node sees it (GET /indexes/orders).</summary>
    public static Task<JsonElement> IndexAsync(this ClusterNodes cluster, string node) => cluster.GetJsonAsync(node, "indexes/orders");

    /// <summary>Waits until <paramref name="node"/> sees <paramref name="generation"/> active, none pending, and every shard ready.</summary>
    public static Task WaitForActiveAsync(this ClusterNodes cluster, string node, int generation, TimeSpan timeout)
    {
        var last = default(JsonElement);
        return ClusterNodes.WaitUntilAsync(
            async () =>
            {
                last = await cluster.IndexAsync(node);
                return last.GetProperty("activeGeneration").GetInt32() == generation
                    && last.GetProperty("pendingGeneration").ValueKind == JsonValueKind.Null
                    && last.GetProperty("shards").EnumerateArray().All(s => s.GetProperty("ready").GetBoolean() && s.GetProperty("generation").GetInt32() == generation);
            },
            timeout,
            () => $"generation {generation} active and ready on every shard; last seen: {last}");
    }

    /// <summary>POST /indexes/orders/verify on <paramref name="node"/>: every shard's report.</summary>
    public static async Task<JsonElement> VerifyAsync(this ClusterNodes cluster, string node)
    {
        using var response = await cluster.Http.PostAsync(new Uri(cluster.Url(node), "indexes/orders/verify"), null);
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.IsSuccessStatusCode, $"verify on {node}: {(int)response.StatusCode} {body}");
        return JsonDocument.Parse(body).RootElement.Clone();
    }

    /// <summary>The names of the local indexes <paramref name="node"/>'s engine holds (GET /shard/indexes).</summary>
    public static async Task<IReadOnlyList<string>> LocalIndexesAsync(this ClusterNodes cluster, string node) =>
        [.. (await cluster.GetJsonAsync(node, "shard/indexes")).GetProperty("indexes").EnumerateArray().Select(i => i.GetProperty("name").GetString()!)];
}
