using System.Net;
using System.Text.Json;
using Indexing.Server.Hosting;

namespace Indexing.Server.Tests;

/// <summary>
/// The server starts over what a previous run left, as <c>serve</c> does (<see cref="ServerHost.StartAsync"/>):
/// one index whose files are damaged must not keep it from starting, nor the other indexes from serving.
/// </summary>
public sealed class IndexStartupTests : IDisposable
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);
    private readonly TempDirectory _directory = new("indexing-startup-tests");

    [Fact]
    public async Task Start_WithOneIndexThatCannotBeOpened_ServesTheOthers_AndAnswers503ForIt()
    {
        await using (var first = await ServerHost.StartAsync(_directory.Path, [], RunningServer.Defaults(), CancellationToken.None))
        {
            using var client = new HttpClient { BaseAddress = first.BaseAddress, Timeout = _hangGuard };
            for (var i = 0; i < 50; i++)
            {
                first.Engine.Store.Put($"orders/{i:D3}", $$"""{"n": {{i}}}""");
            }

            foreach (var name in new[] { "broken", "healthy" })
            {
                using var put = await client.PutAsync($"/indexes/{name}", RunningServer.Json(
                    $$"""{"name": "{{name}}", "collection": "orders", "fields": [{"name": "n", "path": "n", "type": "long"}]}"""));
                Assert.Equal(HttpStatusCode.Created, put.StatusCode);
                await first.Engine.Indexes.WaitForRebuildAsync(name).WaitAsync(_hangGuard);
            }
        }

        var generation = Path.Combine(_directory.Path, "indexes", "broken", "g000001");
        foreach (var segments in Directory.GetFiles(generation, "segments_*"))
        {
            await File.WriteAllBytesAsync(segments, [1, 2, 3, 4, 5, 6, 7, 8]);
        }

        await using var second = await ServerHost.StartAsync(_directory.Path, [], RunningServer.Defaults(), CancellationToken.None);
        using var again = new HttpClient { BaseAddress = second.BaseAddress, Timeout = _hangGuard };

        using var list = JsonDocument.Parse(await again.GetStringAsync("/indexes"));
        var states = list.RootElement.GetProperty("indexes").EnumerateArray()
            .ToDictionary(i => i.GetProperty("name").GetString()!, i => i.GetProperty("status").GetProperty("state").GetString());
        Assert.Equal("error", states["broken"]);
        Assert.Equal("following", states["healthy"]);
        Assert.Contains("\"totalHits\":50", await again.GetStringAsync("/indexes/healthy/query?q=*:*"), StringComparison.Ordinal);

        using var refused = await again.GetAsync("/indexes/broken/query?q=*:*");
        var problem = await refused.Content.ReadAsStringAsync();
        Assert.Equal(HttpStatusCode.ServiceUnavailable, refused.StatusCode);
        Assert.Contains("could not be opened", problem, StringComparison.Ordinal);
        Assert.Contains("/indexes/broken/rebuild", problem, StringComparison.Ordinal);
        // The reason names the index's files; requests without the key never see the data directory.
        Assert.DoesNotContain(Path.GetFullPath(_directory.Path), problem, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Rebuild_OfAnIndexWhoseDefinitionIsUnreadable_Is409SayingWhatToDo_AndAPutOfItsDefinitionRepairsIt()
    {
        const string definition = """{"name": "orders", "collection": "orders", "fields": [{"name": "n", "path": "n", "type": "long"}]}""";
        await using (var first = await ServerHost.StartAsync(_directory.Path, [], RunningServer.Defaults(), CancellationToken.None))
        {
            using var client = new HttpClient { BaseAddress = first.BaseAddress, Timeout = _hangGuard };
            for (var i = 0; i < 20; i++)
            {
                first.Engine.Store.Put($"orders/{i:D3}", $$"""{"n": {{i}}}""");
            }

            using var put = await client.PutAsync("/indexes/orders", RunningServer.Json(definition));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            await first.Engine.Indexes.WaitForRebuildAsync("orders").WaitAsync(_hangGuard);
        }

        // The catalog's copy of the definition no longer parses (edited by hand, or written by a newer version).
        var catalogPath = Path.Combine(_directory.Path, "indexes", "catalog.json");
        var catalog = System.Text.Json.Nodes.JsonNode.Parse(await File.ReadAllTextAsync(catalogPath))!;
        var replaced = ReplaceDefinitions(catalog, """{"name": "orders", "fields": "not a list"}""");
        Assert.True(replaced > 0, "the catalog names no definition to damage");
        await File.WriteAllTextAsync(catalogPath, catalog.ToJsonString());

        await using var second = await ServerHost.StartAsync(_directory.Path, [], RunningServer.Defaults(), CancellationToken.None);
        using var again = new HttpClient { BaseAddress = second.BaseAddress, Timeout = _hangGuard };

        using (var refused = await again.PostAsync("/indexes/orders/rebuild", content: null))
        {
            var problem = await refused.Content.ReadAsStringAsync();
            Assert.True(refused.StatusCode == HttpStatusCode.Conflict, $"{(int)refused.StatusCode}: {problem}");
            Assert.Contains("\"title\":\"Index state conflict\"", problem, StringComparison.Ordinal);
            Assert.Contains("no readable definition", problem, StringComparison.Ordinal);
            Assert.Contains("PUT its definition to /indexes/orders", problem, StringComparison.Ordinal);
            Assert.DoesNotContain(Path.GetFullPath(_directory.Path), problem, StringComparison.Ordinal);
        }

        using var repaired = await again.PutAsync("/indexes/orders", RunningServer.Json(definition));
        Assert.True(repaired.IsSuccessStatusCode, $"{(int)repaired.StatusCode}: {await repaired.Content.ReadAsStringAsync()}");
        await second.Engine.Indexes.WaitForRebuildAsync("orders").WaitAsync(_hangGuard);
        Assert.Contains("\"totalHits\":20", await again.GetStringAsync("/indexes/orders/query?q=*:*"), StringComparison.Ordinal);
    }

    // Every "definitionJson" string in the catalog (the serving definition and any rebuild intent's).
    private static int ReplaceDefinitions(System.Text.Json.Nodes.JsonNode node, string replacement)
    {
        var replaced = 0;
        if (node is System.Text.Json.Nodes.JsonObject obj)
        {
            foreach (var (key, value) in obj.ToList())
            {
                if (string.Equals(key, "definitionJson", StringComparison.OrdinalIgnoreCase) && value is System.Text.Json.Nodes.JsonValue)
                {
                    obj[key] = replacement;
                    replaced++;
                }
                else if (value is not null)
                {
                    replaced += ReplaceDefinitions(value, replacement);
                }
            }
        }
        else if (node is System.Text.Json.Nodes.JsonArray array)
        {
            foreach (var item in array)
            {
                if (item is not null)
                {
                    replaced += ReplaceDefinitions(item, replacement);
                }
            }
        }

        return replaced;
    }

    public void Dispose() => _directory.Dispose();
}
