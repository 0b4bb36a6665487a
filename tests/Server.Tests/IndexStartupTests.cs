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
                first.Store.Put($"orders/{i:D3}", $$"""{"n": {{i}}}""");
            }

            foreach (var name in new[] { "broken", "healthy" })
            {
                using var put = await client.PutAsync($"/indexes/{name}", RunningServer.Json(
                    $$"""{"name": "{{name}}", "collection": "orders", "fields": [{"name": "n", "path": "n", "type": "long"}]}"""));
                Assert.Equal(HttpStatusCode.Created, put.StatusCode);
                await first.Indexes.WaitForRebuildAsync(name).WaitAsync(_hangGuard);
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

    public void Dispose() => _directory.Dispose();
}
