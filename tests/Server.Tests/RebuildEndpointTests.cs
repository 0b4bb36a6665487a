using System.Net;
using System.Net.Http.Json;
using System.Text.Json;

namespace Indexing.Server.Tests;

public sealed class RebuildEndpointTests
{
    private const string Definition = """
        {"name": "orders-by-status", "collection": "orders", "fields": [
          {"name": "status", "path": "status", "type": "keyword"},
          {"name": "total", "path": "total", "type": "double", "sortable": true}
        ]}
        """;

    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Rebuild_StartPollVerify_AndASecondStartIsAConflict()
    {
        await using var server = await RunningServer.StartAsync();
        var documents = server.LoadOrders(4_000_000);
        using (var created = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json(Definition)))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        await WaitForPhaseAsync(server, "done");

        using var started = await server.Client.PostAsync("/indexes/orders-by-status/rebuild", content: null);
        using var again = await server.Client.PostAsync("/indexes/orders-by-status/rebuild", content: null);
        var progress = await WaitForPhaseAsync(server, "done");
        using var verify = await server.Client.PostAsync("/indexes/orders-by-status/verify", content: null);
        var report = await verify.Content.ReadFromJsonAsync<JsonElement>();
        // The admin page's bar names the phase exactly as the rebuild endpoint does.
        var bar = Assert.Single((await server.GetJsonAsync("/admin/rebuilds")).GetProperty("rebuilds").EnumerateArray());
        Assert.Equal(progress.GetProperty("phase").GetString(), bar.GetProperty("phase").GetString());

        Assert.Equal(HttpStatusCode.Accepted, started.StatusCode);
        Assert.Equal("/indexes/orders-by-status/rebuild", started.Headers.Location?.OriginalString);
        // The second request either found the first running (409) or, on a fast machine, already done (202 again).
        Assert.True(again.StatusCode is HttpStatusCode.Conflict or HttpStatusCode.Accepted, $"{again.StatusCode}");
        if (again.StatusCode == HttpStatusCode.Conflict)
        {
            Assert.Contains("already running", (await again.Content.ReadFromJsonAsync<JsonElement>()).GetProperty("detail").GetString(), StringComparison.Ordinal);
        }

        Assert.Equal(documents, progress.GetProperty("documentsDone").GetInt64());
        Assert.Equal(HttpStatusCode.OK, verify.StatusCode);
        Assert.True(report.GetProperty("isConsistent").GetBoolean(), report.ToString());
        Assert.Equal(documents, report.GetProperty("storeDocuments").GetInt64());
        var summary = await server.GetJsonAsync("/indexes/orders-by-status");
        Assert.True(summary.GetProperty("generation").GetInt32() >= 2);
    }

    // One verify runs at a time per index: of two sent together (each reads 40,000 ids and documents'
    // metadata, a few hundred milliseconds), one is refused with 409 naming the running one.
    [Fact]
    public async Task Verify_TwoAtOnce_OneIsAConflictAndTheOtherReports()
    {
        await using var server = await RunningServer.StartAsync();
        const int documents = 40_000;
        server.Store.PutMany(Enumerable.Range(0, documents).Select(i =>
            new Storage.DocumentWrite($"orders/{i:D6}", System.Text.Encoding.UTF8.GetBytes($$"""{"status": "s{{i % 7}}", "total": {{i}}}"""))));
        await server.DefineIndexAsync(Definition, documents);

        var conflicts = new List<string>();
        for (var attempt = 0; attempt < 10 && conflicts.Count == 0; attempt++)
        {
            var pair = await Task.WhenAll(
                server.Client.PostAsync("/indexes/orders-by-status/verify", content: null),
                server.Client.PostAsync("/indexes/orders-by-status/verify", content: null));
            foreach (var response in pair)
            {
                using (response)
                {
                    var body = await response.Content.ReadFromJsonAsync<JsonElement>();
                    if (response.StatusCode == HttpStatusCode.Conflict)
                    {
                        Assert.Equal("Verify running", body.GetProperty("title").GetString());
                        conflicts.Add(body.GetProperty("detail").GetString()!);
                    }
                    else
                    {
                        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                        Assert.True(body.GetProperty("isConsistent").GetBoolean(), body.ToString());
                        Assert.Equal(documents, body.GetProperty("storeDocuments").GetInt64());
                    }
                }
            }
        }

        Assert.NotEmpty(conflicts);
        Assert.StartsWith("a verify of index 'orders-by-status' is already running", conflicts[0], StringComparison.Ordinal);
    }

    [Fact]
    public async Task CancelRebuild_WhenNoneRuns_IsAConflict_AndUnknownIndexIsNotFound()
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(200_000);
        using (var created = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json(Definition)))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        await WaitForPhaseAsync(server, "done");

        using var cancel = await server.Client.DeleteAsync("/indexes/orders-by-status/rebuild");
        using var unknown = await server.Client.PostAsync("/indexes/nope/rebuild", content: null);
        using var badName = await server.Client.PostAsync("/indexes/..%2Fx/verify", content: null);
        using var notAnOperation = await server.Client.PostAsync("/indexes/orders-by-status/explode", content: null);

        Assert.Equal(HttpStatusCode.Conflict, cancel.StatusCode);
        Assert.Contains("no rebuild", (await cancel.Content.ReadFromJsonAsync<JsonElement>()).GetProperty("detail").GetString(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.NotFound, unknown.StatusCode);
        Assert.Equal(HttpStatusCode.BadRequest, badName.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, notAnOperation.StatusCode);
        Assert.Equal("application/problem+json", cancel.Content.Headers.ContentType?.MediaType);
    }

    [Fact]
    public async Task Rebuild_BulkPhase_IsOnTheAdminPageAsRebuildOfTheIndex_AndCanBeRethrottledThere()
    {
        const string name = "rebuild orders-by-status";
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(8_000_000);
        using (var created = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json(Definition)))
        {
            Assert.Equal(HttpStatusCode.Created, created.StatusCode);
        }

        // The index manager tells the server's registry when the first build's bulk phase starts
        // reading; 8 MB take far longer to index than this loop takes to see it.
        using (var timeout = new CancellationTokenSource(_hangGuard))
        {
            while (server.Host.Engine.Prefetches.Find(name) is null && server.Host.Engine.Indexes.GetRebuild("orders-by-status")?.Phase is null or Indexer.RebuildPhase.Bulk)
            {
                await Task.Delay(1, timeout.Token);
            }
        }

        using var throttled = await server.Client.PutAsync("/admin/prefetch/limits", RunningServer.Json($$"""{"prefetch": "{{name}}", "maxConcurrency": 1}"""));
        var body = await throttled.Content.ReadFromJsonAsync<JsonElement>();
        var progress = await WaitForPhaseAsync(server, "done");

        Assert.Equal(HttpStatusCode.OK, throttled.StatusCode);
        var shown = Assert.Single(body.GetProperty("prefetches").EnumerateArray(), p => p.GetProperty("name").GetString() == name);
        Assert.Equal(1, shown.GetProperty("limits").GetProperty("maxConcurrency").GetInt32());
        // Registered for the bulk phase only.
        Assert.Null(server.Host.Engine.Prefetches.Find(name));
        Assert.True(progress.GetProperty("documentsDone").GetInt64() > 0);
    }

    // Indexes:MaxConcurrentRebuilds 1: with the first index's rebuild held in its bulk phase, the
    // second index's rebuild waits, and says so wherever an operator looks: the 202 of its start, its
    // progress, the index's summary and the admin page's bars. Released, both run to done.
    [Fact]
    public async Task LimitOne_ASecondIndexRebuild_ShowsQueuedInTheApiAndOnTheAdminPage_ThenRuns()
    {
        using var reached = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var hold = 0;
        await using var server = await RunningServer.StartAsync(
            new Dictionary<string, string?> { [Hosting.ServerOptions.MaxConcurrentRebuildsSetting] = "1" },
            withHooks: manager => manager with
            {
                RebuildHook = (index, point) =>
                {
                    if (index == "orders-by-status" && point == Indexer.RebuildPoint.BulkStarted && Interlocked.Exchange(ref hold, 0) == 1)
                    {
                        reached.Set();
                        release.Wait(_hangGuard);
                    }
                },
            });
        Assert.Equal(1, server.Host.Engine.Options.Indexes.MaxConcurrentRebuilds);
        server.LoadOrders(500_000);
        await server.DefineIndexAsync(Definition, 1);
        await server.DefineIndexAsync(Definition.Replace("orders-by-status", "orders-by-total", StringComparison.Ordinal), 1);
        Volatile.Write(ref hold, 1);

        using var first = await server.Client.PostAsync("/indexes/orders-by-status/rebuild", content: null);
        Assert.True(reached.Wait(_hangGuard), "the first rebuild never reached its bulk phase");
        using var second = await server.Client.PostAsync("/indexes/orders-by-total/rebuild", content: null);
        var started = await second.Content.ReadFromJsonAsync<JsonElement>();
        var progress = await server.GetJsonAsync("/indexes/orders-by-total/rebuild");
        var summary = await server.GetJsonAsync("/indexes/orders-by-total");
        var bars = (await server.GetJsonAsync("/admin/rebuilds")).GetProperty("rebuilds").EnumerateArray().ToDictionary(b => b.GetProperty("index").GetString()!);
        release.Set();
        var done = await WaitForPhaseAsync(server, "done", "orders-by-total");

        Assert.Equal(HttpStatusCode.Accepted, first.StatusCode);
        Assert.Equal(HttpStatusCode.Accepted, second.StatusCode);
        Assert.Equal("queued", started.GetProperty("phase").GetString());
        Assert.Equal("queued", progress.GetProperty("phase").GetString());
        Assert.Equal(1, progress.GetProperty("queuePosition").GetInt32());
        Assert.Equal("queued", summary.GetProperty("rebuild").GetProperty("phase").GetString());
        Assert.Equal("queued", bars["orders-by-total"].GetProperty("phase").GetString());
        Assert.Equal(1, bars["orders-by-total"].GetProperty("queuePosition").GetInt32());
        Assert.Equal("bulk", bars["orders-by-status"].GetProperty("phase").GetString());
        Assert.Equal(JsonValueKind.Null, bars["orders-by-status"].GetProperty("queuePosition").ValueKind);
        Assert.Equal(JsonValueKind.Null, done.GetProperty("queuePosition").ValueKind);
        Assert.Equal("done", (await WaitForPhaseAsync(server, "done")).GetProperty("phase").GetString());
    }

    private static async Task<JsonElement> WaitForPhaseAsync(RunningServer server, string phase, string index = "orders-by-status")
    {
        using var timeout = new CancellationTokenSource(_hangGuard);
        while (true)
        {
            using var response = await server.Client.GetAsync($"/indexes/{index}/rebuild", timeout.Token);
            if (response.StatusCode == HttpStatusCode.OK)
            {
                var progress = await response.Content.ReadFromJsonAsync<JsonElement>(timeout.Token);
                if (string.Equals(progress.GetProperty("phase").GetString(), phase, StringComparison.OrdinalIgnoreCase))
                {
                    return progress;
                }
            }

            await Task.Delay(50, timeout.Token);
        }
    }
}
