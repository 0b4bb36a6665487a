using System.Net;
using System.Text.Json;

namespace Indexing.Server.Tests;

public sealed class StoreStatusEndpointTests
{
    [Fact]
    public async Task Store_AfterDeletes_ShowsTombstonesHeldThenPurged_WithTheLowWatermark()
    {
        await using var server = await RunningServer.StartAsync();
        foreach (var n in new[] { 1, 2, 3 })
        {
            Assert.Equal(HttpStatusCode.Created, (await server.Client.PutAsync($"/docs/orders/{n}", RunningServer.Json($$"""{"total":{{n}}}"""))).StatusCode);
        }

        Assert.Equal(HttpStatusCode.OK, (await server.Client.DeleteAsync("/docs/orders/1")).StatusCode);
        Assert.Equal(HttpStatusCode.OK, (await server.Client.DeleteAsync("/docs/orders/2")).StatusCode);

        // No index holds them: the manager's watermark lets the purger (every second) take both.
        JsonElement store;
        using (var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30)))
        {
            while ((store = await server.GetJsonAsync("/admin/store")).GetProperty("tombstonesPurged").GetInt64() < 2)
            {
                await Task.Delay(50, timeout.Token);
            }
        }

        Assert.Equal(5, store.GetProperty("lastEtag").GetInt64());
        Assert.Equal(0, store.GetProperty("tombstonesHeld").GetInt64());
        Assert.Equal(2, store.GetProperty("tombstonesPurged").GetInt64());
        Assert.Equal(5, store.GetProperty("tombstonesPurgedThroughEtag").GetInt64());
        Assert.Equal(JsonValueKind.Number, store.GetProperty("tombstoneLowWatermark").ValueKind);
        Assert.Equal(JsonValueKind.Null, store.GetProperty("tombstonePurgeError").ValueKind);
        // Small documents only, and nothing flushed: no blob file yet.
        Assert.Equal(0, store.GetProperty("liveBlobFilesBytes").GetInt64());
        Assert.Equal(0, store.GetProperty("blobGarbageBytes").GetInt64());
        Assert.Contains("TombstonePurgeInterval=1 s", store.GetProperty("options").GetString(), StringComparison.Ordinal);
        // Writes are accepted (a full volume is StoreFullTests').
        Assert.True(store.GetProperty("writesAccepted").GetBoolean());
        Assert.False(store.GetProperty("volumeFull").GetBoolean());
        Assert.Equal(JsonValueKind.Null, store.GetProperty("writeError").ValueKind);
        Assert.Equal(64L << 20, store.GetProperty("resumeFreeBytes").GetInt64());
        // Reads never show where the data lives on this machine.
        Assert.Equal("<data>/store", store.GetProperty("path").GetString());
        Assert.DoesNotContain(Path.GetFullPath(server.Directory), store.GetRawText(), StringComparison.Ordinal);
    }
}
