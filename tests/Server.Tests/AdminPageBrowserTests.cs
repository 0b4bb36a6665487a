using System.Text.Json.Nodes;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Server.Admin;

namespace Indexing.Server.Tests;

/// <summary>
/// The admin page in a real headless Chromium against a live server with a running prefetch: the
/// charts must render the streamed data, and the screenshot can become docs/admin-page.png (with ADMIN_PAGE_SCREENSHOT).
/// </summary>
public sealed class AdminPageBrowserTests
{
    private const int Width = 1400;
    private const int Height = 1000;

    [Fact]
    public async Task AdminPage_LivePrefetch_ChartsDrawStreamedDataAndScreenshotTaken()
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using var server = await RunningServer.StartAsync();
        // The browser starts before the prefetch: its cold start must not eat into the run the page shows.
        await using var browser = await HeadlessChromium.StartAsync(Width, Height, timeout.Token);
        await browser.SendAsync("Emulation.setDeviceMetricsOverride",
            new JsonObject { ["width"] = Width, ["height"] = Height, ["deviceScaleFactor"] = 1, ["mobile"] = false }, timeout.Token);
        server.LoadOrders(14_000_000);
        var source = server.StartPrefetch("rebuild:orders-by-customer");
        using var rebuild = server.Host.Rebuilds.Register(() =>
        {
            var pressure = source.Pressure;
            return new RebuildBar("orders-by-customer", RebuildPhase.Bulk, pressure.DocumentsDone, pressure.PlanComplete ? pressure.DocumentsPlanned : null, pressure.Eta,
                BulkCommitInterval: TimeSpan.FromSeconds(2.2));
        });
        // A rebuild waiting for a slot (Indexes:MaxConcurrentRebuilds) shows as queued, with its place.
        using var queued = server.Host.Rebuilds.Register(() => new RebuildBar("orders-by-total", RebuildPhase.Queued, 0, null, null, QueuePosition: 1));
        // Foreground reads while the prefetch runs, so the foreground p99 chart has something to show.
        using var stopReads = CancellationTokenSource.CreateLinkedTokenSource(timeout.Token);
        var reads = Task.Run(async () =>
        {
            var ids = server.Store.ScanMetadata().Select(m => m.Id).Take(500).ToArray();
            for (var i = 0; !stopReads.IsCancellationRequested; i++)
            {
                using var response = await server.Client.GetAsync("/docs/" + ids[i % ids.Length], stopReads.Token);
                await Task.Delay(5, stopReads.Token);
            }
        });

        await browser.SendAsync("Page.navigate", new JsonObject { ["url"] = new Uri(server.Host.BaseAddress, "/admin").ToString() }, timeout.Token);

        // Until navigation ends the old page (about:blank, no body yet) answers. Six one-second snapshots: enough history for lines, while the prefetch (14 MB at ~1 MB/s) still runs;
        // by then the memory chart (polled every 2 s, with the server's history since it started) has samples too.
        const string ready = "document.body && Number(document.body.dataset.snapshots || 0) >= 6 && Number(document.body.dataset.memorySamples || 0) >= 3 ? 1 : 0";
        while ((int?)await browser.EvaluateAsync(ready, timeout.Token) != 1)
        {
            await Task.Delay(250, timeout.Token);
        }

        var page = (await browser.EvaluateAsync(PageStateScript, timeout.Token))!;
        Assert.Equal("live", (string?)page["connection"]);
        Assert.Equal(["budget", "concurrency", "foreground", "sizes", "throughput", "wait"], page["charts"]!.AsArray().Select(c => (string)c!).Order());
        Assert.True((int)page["canvases"]! >= 6, page.ToJsonString());
        Assert.True((long)page["documentsDone"]! > 0, page.ToJsonString());
        Assert.True((string?)page["state"] is "planning" or "running", page.ToJsonString());
        // The lines were drawn from data: pixels in each chart's first series colour (see admin.js).
        Assert.True((int)page["throughputLinePixels"]! > 20, page.ToJsonString());
        Assert.True((int)page["concurrencyLinePixels"]! > 20, page.ToJsonString());
        Assert.True((int)page["rebuildBars"]! == 2, page.ToJsonString());
        Assert.Equal("queued", (string?)page["queuedBadge"]);
        Assert.Equal("waiting for a rebuild slot (#1 in the queue)", (string?)page["queuedNote"]);
        Assert.Equal("queued", (string?)page["queuedText"]);
        Assert.Contains("commits every 2.2 s", (string?)page["rebuildNote"], StringComparison.Ordinal);
        // Process memory: the chart drew the RSS line from /admin/memory's samples, and the tiles show figures.
        Assert.True((int)page["memorySamples"]! >= 3, page.ToJsonString());
        Assert.True((int)page["rssLinePixels"]! > 20, page.ToJsonString());
        Assert.Matches(@"^\d+(\.\d)? (MiB|GiB)$", (string?)page["rss"]);

        var png = await browser.ScreenshotAsync(timeout.Token);
        Assert.Equal([0x89, (byte)'P', (byte)'N', (byte)'G'], png[..4]);
        // A test run leaves the repository alone: the picture in docs/ is refreshed on request,
        // ADMIN_PAGE_SCREENSHOT=$PWD/docs/admin-page.png dotnet test tests/Server.Tests --filter AdminPage_LivePrefetch
        if (Environment.GetEnvironmentVariable("ADMIN_PAGE_SCREENSHOT") is { Length: > 0 } screenshot)
        {
            await File.WriteAllBytesAsync(screenshot, png, timeout.Token);
        }

        await stopReads.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reads);
    }

    // A real rebuild, held in its bulk phase until the page has drawn its prefetch, then let go: once it
    // is done, the card stays, moved below the running ones and marked finished with how it ended, its
    // charts and decisions as they were at the end, while "No prefetch is running" shows again.
    [Fact]
    public async Task AdminPage_RebuildFinishes_ItsPrefetchCardStaysMarkedFinished()
    {
        const string name = "rebuild orders-by-status";
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(120));
        using var reached = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        var hold = 1;
        await using var server = await RunningServer.StartAsync(withHooks: manager => manager with
        {
            RebuildHook = (_, point) =>
            {
                if (point == RebuildPoint.BulkStarted && Interlocked.Exchange(ref hold, 0) == 1)
                {
                    reached.Set();
                    release.Wait(TimeSpan.FromSeconds(120));
                }
            },
        });
        try
        {
            await using var browser = await HeadlessChromium.StartAsync(Width, Height, timeout.Token);
            await browser.SendAsync("Emulation.setDeviceMetricsOverride",
                new JsonObject { ["width"] = Width, ["height"] = Height, ["deviceScaleFactor"] = 1, ["mobile"] = false }, timeout.Token);
            var documents = server.LoadOrders(2_000_000);
            using (var created = await server.Client.PutAsync("/indexes/orders-by-status", RunningServer.Json("""
                {"name": "orders-by-status", "collection": "orders", "fields": [{"name": "status", "path": "status", "type": "keyword"}]}
                """), timeout.Token))
            {
                Assert.True(created.IsSuccessStatusCode, await created.Content.ReadAsStringAsync(timeout.Token));
            }

            Assert.True(reached.Wait(TimeSpan.FromSeconds(60), timeout.Token), "the index's first build never reached its bulk phase");
            await browser.SendAsync("Page.navigate", new JsonObject { ["url"] = new Uri(server.Host.BaseAddress, "/admin").ToString() }, timeout.Token);

            // Running: its card is among the running ones, with a few seconds of history to draw.
            const string running = $$"""document.querySelector('#prefetches article[data-prefetch="{{name}}"]') && Number(document.body.dataset.snapshots || 0) >= 3 ? 1 : 0""";
            while ((int?)await browser.EvaluateAsync(running, timeout.Token) != 1 || server.Host.Engine.GetPrefetch(name) is not { History.Length: >= 3 })
            {
                await Task.Delay(250, timeout.Token);
            }

            var before = (await browser.EvaluateAsync(FinishedStateScript, timeout.Token))!;
            release.Set();
            using (var done = new CancellationTokenSource(TimeSpan.FromSeconds(60)))
            {
                while (server.Host.Engine.GetRebuild("orders-by-status") is not { IsFinished: true })
                {
                    await Task.Delay(100, done.Token);
                }
            }

            const string moved = "document.querySelectorAll('#finished-prefetches article').length === 1 && !document.querySelector('#prefetches article') ? 1 : 0";
            while ((int?)await browser.EvaluateAsync(moved, timeout.Token) != 1)
            {
                await Task.Delay(250, timeout.Token);
            }

            var page = (await browser.EvaluateAsync(FinishedStateScript, timeout.Token))!;
            var final = Assert.Single(server.Host.Engine.ListFinishedPrefetches());

            Assert.Equal(1, (int)before["runningCards"]!);
            Assert.Equal(0, (int)before["finishedCards"]!);
            Assert.True((bool)before["finishedHidden"]!, before.ToJsonString());
            Assert.Equal(RebuildPhase.Done, server.Host.Engine.GetRebuild("orders-by-status")!.Phase);
            Assert.Equal(PrefetchState.Completed, final.State);

            Assert.Equal(0, (int)page["runningCards"]!);
            Assert.False((bool)page["emptyHidden"]!, page.ToJsonString());
            Assert.StartsWith("No prefetch is running.", (string?)page["emptyText"], StringComparison.Ordinal);
            Assert.False((bool)page["finishedHidden"]!, page.ToJsonString());
            Assert.Equal(name, (string?)page["name"]);
            Assert.True((bool)page["markedFinished"]!, page.ToJsonString());
            Assert.Equal("finished: completed", (string?)page["state"]);
            Assert.Matches(@"^at \d\d:\d\d:\d\d, after \d+ ", (string?)page["ended"]);
            Assert.Equal(documents, (long)page["documentsDone"]!);
            Assert.Equal(["budget", "concurrency", "foreground", "sizes", "throughput", "wait"], page["charts"]!.AsArray().Select(c => (string)c!).Order());
            // The limit L line (dashed orange, see admin.js) drawn from the final history.
            Assert.True((int)page["limitLinePixels"]! > 20, page.ToJsonString());
            // The decisions as they ended: a small local collection is often read before the controller's first tick.
            Assert.Equal(Math.Min(12, final.RecentDecisions.Length), (int)page["decisionRows"]!);
            Assert.Equal(
                final.LastDecision is null ? "The reads ended before the controller's first decision." : $"Last: {final.LastDecisionReason}",
                (string?)page["lastDecision"]);
        }
        finally
        {
            release.Set();
        }
    }

    private const string FinishedStateScript = """
        (() => {
          const article = document.querySelector("#finished-prefetches article");
          const result = {
            runningCards: document.querySelectorAll("#prefetches article").length,
            finishedCards: document.querySelectorAll("#finished-prefetches article").length,
            emptyHidden: document.getElementById("prefetches-empty").hidden,
            emptyText: document.getElementById("prefetches-empty").textContent,
            finishedHidden: document.getElementById("finished-prefetches").hidden,
          };
          if (!article) return result;
          const canvas = article.querySelector('figure[data-chart="concurrency"] canvas');
          const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
          let limitLinePixels = 0;
          for (let i = 0; i < pixels.length; i += 4) {
            if (Math.abs(pixels[i] - 217) < 8 && Math.abs(pixels[i + 1] - 130) < 8 && Math.abs(pixels[i + 2] - 43) < 8 && pixels[i + 3] > 200) limitLinePixels++;
          }
          return Object.assign(result, {
            name: article.dataset.prefetch,
            markedFinished: article.classList.contains("finished"),
            state: article.querySelector(".state").textContent,
            ended: article.querySelector(".ended").textContent,
            documentsDone: Number(article.querySelector('[data-figure="done"]').textContent.replace(/,/g, "")),
            charts: [...article.querySelectorAll("figure[data-chart]")].filter(f => f.querySelector(".uplot")).map(f => f.dataset.chart),
            limitLinePixels,
            decisionRows: article.querySelectorAll(".decisions tbody tr").length,
            lastDecision: article.querySelector(".last-decision").textContent,
          });
        })()
        """;

    // Counts pixels of one colour in a chart's canvas: uPlot draws series into a <canvas>, so
    // this is how the test sees that data, not just axes, was plotted.
    private const string PageStateScript = """
        (() => {
          const article = document.querySelector("article.prefetch");
          const count = (chart, r, g, b, root = article, attribute = "data-chart") => {
            const canvas = root.querySelector(`figure[${attribute}="${chart}"] canvas`);
            const pixels = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
            let n = 0;
            for (let i = 0; i < pixels.length; i += 4) {
              if (Math.abs(pixels[i] - r) < 8 && Math.abs(pixels[i + 1] - g) < 8 && Math.abs(pixels[i + 2] - b) < 8 && pixels[i + 3] > 200) n++;
            }
            return n;
          };
          return {
            connection: document.getElementById("connection").textContent,
            charts: [...article.querySelectorAll("figure[data-chart]")].filter(f => f.querySelector(".uplot")).map(f => f.dataset.chart),
            canvases: article.querySelectorAll("canvas").length,
            documentsDone: Number(article.querySelector('[data-figure="done"]').textContent.replace(/,/g, "")),
            state: article.querySelector(".state").textContent,
            throughputLinePixels: count("throughput", 27, 127, 59),
            concurrencyLinePixels: count("concurrency", 47, 111, 223),
            rebuildBars: document.querySelectorAll("#rebuild-bars .rebuild").length,
            rebuildNote: document.querySelector("#rebuild-bars .rebuild .muted")?.textContent,
            queuedBadge: document.querySelector("#rebuild-bars .rebuild.queued .badge")?.textContent,
            queuedNote: document.querySelector("#rebuild-bars .rebuild.queued .muted")?.textContent,
            queuedText: document.querySelector("#rebuild-bars .rebuild.queued .progress-text")?.textContent,
            memorySamples: Number(document.body.dataset.memorySamples || 0),
            rssLinePixels: count("memory", 179, 38, 30, document.getElementById("memory"), "data-memory-chart"),
            rss: document.querySelector('[data-memory="rss"]').textContent,
          };
        })()
        """;
}
