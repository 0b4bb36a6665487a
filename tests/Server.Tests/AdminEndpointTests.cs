using System.Globalization;
using System.Net;
using System.Net.Http.Json;
using System.Net.ServerSentEvents;
using System.Text;
using System.Text.Json;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Server.Admin;

namespace Indexing.Server.Tests;

public sealed class AdminEndpointTests
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Prefetch_NoneRegistered_EmptyList()
    {
        await using var server = await RunningServer.StartAsync();
        var list = await server.GetJsonAsync("/admin/prefetch");
        Assert.Empty(list.GetProperty("prefetches").EnumerateArray());
    }

    [Fact]
    public async Task Prefetch_Registered_PressureInCamelCaseWithLimitsAndHistory()
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(4_000_000);
        var source = server.StartPrefetch("rebuild-orders", maxBytesPerSecond: 1_000_000);
        await WaitUntilAsync(() => source.Pressure.DocumentsDone > 0 && source.Pressure.History.Length > 0);

        var list = await server.GetJsonAsync("/admin/prefetch");

        var prefetch = Assert.Single(list.GetProperty("prefetches").EnumerateArray());
        Assert.Equal("rebuild-orders", prefetch.GetProperty("name").GetString());
        var pressure = prefetch.GetProperty("pressure");
        Assert.Equal("adaptive", pressure.GetProperty("strategy").GetString());
        Assert.True(pressure.GetProperty("state").GetString() is "planning" or "running" or "completed");
        Assert.True(pressure.GetProperty("documentsDone").GetInt64() > 0);
        Assert.True(pressure.GetProperty("concurrencyLimit").GetInt32() >= 1);
        Assert.True(pressure.GetProperty("history").GetArrayLength() > 0);
        Assert.Equal(RunningServer.PrefetchBudgetBytes, prefetch.GetProperty("limits").GetProperty("budgetBytes").GetInt64());
        Assert.Equal(1_000_000, prefetch.GetProperty("limits").GetProperty("maxBytesPerSecond").GetInt64());
    }

    [Fact]
    public async Task Stream_Registered_YieldsSnapshotsAboutOncePerSecondAndEndsWhenClientLeaves()
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(4_000_000);
        server.StartPrefetch("scan");
        using var timeout = new CancellationTokenSource(_hangGuard);

        var events = new List<SseItem<string>>();
        using (var response = await server.Client.GetAsync("/admin/prefetch/stream", HttpCompletionOption.ResponseHeadersRead, timeout.Token))
        {
            Assert.Equal("text/event-stream", response.Content.Headers.ContentType?.MediaType);
            await using var stream = await response.Content.ReadAsStreamAsync(timeout.Token);
            await foreach (var item in SseParser.Create(stream).EnumerateAsync(timeout.Token))
            {
                events.Add(item);
                if (events.Count == 3)
                {
                    break;
                }
            }
        }

        Assert.All(events, e => Assert.Equal("pressure", e.EventType));
        var snapshots = events.Select(e => JsonDocument.Parse(e.Data).RootElement.GetProperty("prefetches")[0].GetProperty("pressure")).ToList();
        Assert.All(snapshots, s => Assert.Equal("adaptive", s.GetProperty("strategy").GetString()));
        // Each event is a current reading: the prefetcher's elapsed time never goes back, and moves on
        // over the stream. (Two neighbours may be equal: after a late event the timer fires again at
        // once, within one prefetch tick, so both can carry the same published snapshot.)
        var elapsed = snapshots.Select(s => TimeSpan.Parse(s.GetProperty("elapsed").GetString()!, System.Globalization.CultureInfo.InvariantCulture)).ToList();
        Assert.True(elapsed[0] <= elapsed[1] && elapsed[1] <= elapsed[2] && elapsed[0] < elapsed[2], string.Join(", ", elapsed));

        // The server still answers after the client went away mid-stream.
        var after = await server.GetJsonAsync("/admin/prefetch");
        Assert.Single(after.GetProperty("prefetches").EnumerateArray());
    }

    [Fact]
    public async Task Limits_Valid_AppliedLiveToTheAdaptivePrefetcher()
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(4_000_000);
        var source = (PrefetchPipeline)server.StartPrefetch("scan");

        using var response = await server.Client.PutAsync("/admin/prefetch/limits",
            RunningServer.Json("""{"maxMegabytesPerSecond": 2.5, "maxConcurrency": 3, "budget": "16MiB"}"""));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(new PrefetchLimits { BudgetBytes = 16L << 20, MaxConcurrency = 3, MaxBytesPerSecond = 2_500_000 }, source.Limits);
        var body = await response.Content.ReadFromJsonAsync<JsonElement>();
        Assert.Equal(3, body.GetProperty("prefetches")[0].GetProperty("limits").GetProperty("maxConcurrency").GetInt32());

        // null removes a cap; absent keeps the value.
        using var uncapped = await server.Client.PutAsync("/admin/prefetch/limits", RunningServer.Json("""{"prefetch": "scan", "maxMegabytesPerSecond": null}"""));
        Assert.Equal(HttpStatusCode.OK, uncapped.StatusCode);
        Assert.Equal(new PrefetchLimits { BudgetBytes = 16L << 20, MaxConcurrency = 3, MaxBytesPerSecond = null }, source.Limits);
    }

    public static TheoryData<string, HttpStatusCode, string> BadLimits => new()
    {
        { """{"maxMegabytesPerSecond": -1}""", HttpStatusCode.BadRequest, "\"maxMegabytesPerSecond\" is '-1'" },
        { """{"maxMegabytesPerSecond": "fast"}""", HttpStatusCode.BadRequest, "\"maxMegabytesPerSecond\" is '\"fast\"'" },
        { """{"maxConcurrency": 0}""", HttpStatusCode.BadRequest, "\"maxConcurrency\" is '0'" },
        { """{"maxConcurrency": 2.5}""", HttpStatusCode.BadRequest, "whole number" },
        { """{"maxConcurrency": 100000}""", HttpStatusCode.BadRequest, "MaxConcurrency must be in [1, " },
        { """{"budget": "lots"}""", HttpStatusCode.BadRequest, "\"budget\" is '\"lots\"'" },
        { """{"budget": 1000}""", HttpStatusCode.BadRequest, "at least 1 MiB" },
        { """{"budget": null}""", HttpStatusCode.BadRequest, "\"budget\" is 'null'" },
        { """{"speed": 1}""", HttpStatusCode.BadRequest, "unknown property 'speed'" },
        { """{}""", HttpStatusCode.BadRequest, "changes nothing" },
        { """[1]""", HttpStatusCode.BadRequest, "must be an object" },
        { """{"maxConcurrency": 2""", HttpStatusCode.BadRequest, "not well-formed JSON at line 1" },
        { """{"prefetch": "nope", "maxConcurrency": 2}""", HttpStatusCode.NotFound, "no prefetch named 'nope'" },
    };

    [Theory]
    [MemberData(nameof(BadLimits))]
    public async Task Limits_Invalid_ProblemAndLimitsUnchanged(string body, HttpStatusCode status, string detailPart)
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(1_000_000);
        var source = (PrefetchPipeline)server.StartPrefetch("scan");
        var before = source.Limits;

        using var response = await server.Client.PutAsync("/admin/prefetch/limits", RunningServer.Json(body));

        await DocumentEndpointTests.AssertProblem(response, status, detailPart);
        Assert.Equal(before, source.Limits);
    }

    [Fact]
    public async Task Limits_NoAdaptivePrefetch_409()
    {
        await using var server = await RunningServer.StartAsync();
        using var response = await server.Client.PutAsync("/admin/prefetch/limits", RunningServer.Json("""{"maxConcurrency": 2}"""));
        await DocumentEndpointTests.AssertProblem(response, HttpStatusCode.Conflict, "no adaptive prefetch is running");
    }

    [Fact]
    public async Task Metrics_Registered_PrometheusTextWithEveryPrefetchFigure()
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(4_000_000);
        var source = server.StartPrefetch("scan");
        await WaitUntilAsync(() => source.Pressure.DocumentsDone > 0);

        using var response = await server.Client.GetAsync("/metrics");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        var exposition = PrometheusText.Parse(await response.Content.ReadAsStringAsync());

        string[] gauges =
        [
            "indexing_prefetch_concurrency", "indexing_prefetch_concurrency_limit", "indexing_prefetch_throughput",
            "indexing_prefetch_in_flight_bytes", "indexing_prefetch_buffered_bytes", "indexing_prefetch_budget_bytes",
            "indexing_prefetch_consumer_wait_percent", "indexing_prefetch_foreground_p99", "indexing_prefetch_document_size_p99_bytes",
        ];
        foreach (var name in gauges)
        {
            var sample = exposition.Single(name, "scan");
            Assert.Equal("gauge", exposition.Types[sample.Name]);
            Assert.Equal("adaptive", sample.Labels["strategy"]);
        }

        Assert.Equal(RunningServer.PrefetchBudgetBytes, exposition.Single("indexing_prefetch_budget_bytes", "scan").Value);
        Assert.True(exposition.Single("indexing_prefetch_concurrency_limit", "scan").Value >= 1);
        // prometheus-net's MeterAdapter writes .NET counters as gauges (a .NET counter may be recreated from zero).
        var done = exposition.Single("indexing_prefetch_documents_done", "scan");
        Assert.Equal("gauge", exposition.Types[done.Name]);
        Assert.True(done.Value > 0);
    }

    [Fact]
    public async Task Metrics_NoPrefetch_ValidTextWithoutPrefetchSeries()
    {
        await using var server = await RunningServer.StartAsync();
        var text = await server.Client.GetStringAsync("/metrics");
        var exposition = PrometheusText.Parse(text);
        Assert.DoesNotContain(exposition.Samples, s => s.Labels.ContainsKey("prefetch"));
    }

    [Fact]
    public async Task Memory_AfterWrites_SamplesWithRocksDbFiguresTheBoundAndOnlyNewerSamplesAfterASecond()
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(2_000_000);
        var ids = server.Store.ScanMetadata().Select(m => m.Id).Take(200).ToArray();
        foreach (var id in ids)
        {
            server.Store.Get(id);
        }

        // The sampler takes one a second: wait for one taken after the reads.
        var after = server.Host.Memory.Latest.Elapsed;
        await WaitUntilAsync(() => server.Host.Memory.Latest.Elapsed > after);
        var body = await server.Client.GetFromJsonAsync<JsonElement>("/admin/memory");
        var latest = body.GetProperty("latest");
        var resident = latest.GetProperty("residentBytes").GetInt64();
        Assert.True(resident > 0);
        // Linux splits VmRSS into RssAnon + RssShmem (private) and RssFile (mapped files), from the same read.
        Assert.Equal(resident, latest.GetProperty("privateBytes").GetInt64() + latest.GetProperty("mappedFileBytes").GetInt64());
        Assert.True(latest.GetProperty("mappedFileBytes").GetInt64() > 0, "the runtime's own binaries are mapped files");
        Assert.True(latest.GetProperty("gcHeapBytes").GetInt64() > 0);
        Assert.True(latest.GetProperty("threads").GetInt32() > 1);
        Assert.True(latest.GetProperty("openFiles").GetInt32() > 0);
        var store = latest.GetProperty("store");
        Assert.Equal(8L << 20, store.GetProperty("blockCacheCapacityBytes").GetInt64());
        // 2 MB stays in the memtables (nothing flushed yet): the Gets were served from there.
        Assert.True(store.GetProperty("memtableBytes").GetInt64() > 1_000_000, store.ToString());
        Assert.Equal(224L << 20, store.GetProperty("memtableLimitBytes").GetInt64());
        var bound = body.GetProperty("bound");
        Assert.Equal(8L << 20, bound.GetProperty("blockCacheBytes").GetInt64());
        Assert.Equal(
            new[] { "prefetchBudgetBytes", "blockCacheBytes", "rowCacheBytes", "memtableBytes", "luceneRamBufferBytes", "fixedOverheadBytes" }.Sum(p => bound.GetProperty(p).GetInt64()),
            bound.GetProperty("totalBytes").GetInt64());
        Assert.Contains("malloc", body.GetProperty("malloc").GetString(), StringComparison.Ordinal);
        Assert.EndsWith("librocksdb.so", body.GetProperty("rocksDbLibrary").GetString(), StringComparison.Ordinal);

        var history = body.GetProperty("history");
        Assert.True(history.GetArrayLength() >= 2);
        var lastSeconds = TimeSpan.Parse(history[history.GetArrayLength() - 1].GetProperty("elapsed").GetString()!, CultureInfo.InvariantCulture).TotalSeconds;
        var newer = await server.Client.GetFromJsonAsync<JsonElement>(FormattableString.Invariant($"/admin/memory?after={lastSeconds}"));
        Assert.All(newer.GetProperty("history").EnumerateArray(),
            s => Assert.True(TimeSpan.Parse(s.GetProperty("elapsed").GetString()!, CultureInfo.InvariantCulture).TotalSeconds > lastSeconds));

        // A client passes back each sample's elapsed time as it read it: "after" it never includes that sample
        // (seconds as a double can fall one tick short of the sample's TimeSpan).
        foreach (var sample in history.EnumerateArray())
        {
            var elapsed = sample.GetProperty("elapsed").GetString()!;
            var seconds = TimeSpan.Parse(elapsed, CultureInfo.InvariantCulture).TotalSeconds;
            var since = await server.Client.GetFromJsonAsync<JsonElement>(FormattableString.Invariant($"/admin/memory?after={seconds}"));
            Assert.DoesNotContain(since.GetProperty("history").EnumerateArray(), s => s.GetProperty("elapsed").GetString() == elapsed);
        }
    }

    [Fact]
    public async Task Metrics_Memory_UnlabelledGaugesAndCounters()
    {
        await using var server = await RunningServer.StartAsync();
        var exposition = PrometheusText.Parse(await server.Client.GetStringAsync("/metrics"));
        string[] gauges =
        [
            "indexing_process_resident_bytes", "indexing_process_gc_heap_bytes", "indexing_process_gc_committed_bytes", "indexing_process_threads",
            "indexing_process_open_files", "indexing_rocksdb_block_cache_bytes", "indexing_rocksdb_block_cache_pinned_bytes", "indexing_rocksdb_row_cache_bytes",
            "indexing_rocksdb_memtable_bytes", "indexing_rocksdb_table_readers_bytes", "indexing_lucene_ram_buffer_bytes", "indexing_prefetch_held_bytes",
        ];
        foreach (var name in gauges)
        {
            var sample = Assert.Single(exposition.Samples, s => s.Name == name);
            Assert.Equal("gauge", exposition.Types[name]);
            Assert.Empty(sample.Labels);
        }

        Assert.True(exposition.Samples.Single(s => s.Name == "indexing_process_resident_bytes").Value > 10 << 20);
        Assert.Equal("gauge", exposition.Types["indexing_rocksdb_foreground_block_cache_hits"]);
        Assert.Empty(Assert.Single(exposition.Samples, s => s.Name == "indexing_rocksdb_file_read_bytes").Labels);
        Assert.Equal("gauge", exposition.Types["indexing_rocksdb_file_read_bytes"]);
    }

    [Fact]
    public async Task Page_AndAssets_ServedFromTheAssemblyWithoutCdn()
    {
        await using var server = await RunningServer.StartAsync();
        using var page = await server.Client.GetAsync("/admin");
        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        Assert.Equal("text/html", page.Content.Headers.ContentType?.MediaType);
        var html = await page.Content.ReadAsStringAsync();
        Assert.DoesNotContain("http://", html.Replace("http-equiv", "", StringComparison.Ordinal), StringComparison.Ordinal);
        Assert.DoesNotContain("https://", html, StringComparison.Ordinal);

        foreach (var asset in new[] { "uPlot.iife.min.js", "uPlot.min.css", "admin.js", "admin.css" })
        {
            Assert.Contains($"/admin/assets/{asset}", html, StringComparison.Ordinal);
            using var response = await server.Client.GetAsync($"/admin/assets/{asset}");
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.True((await response.Content.ReadAsByteArrayAsync()).Length > 500, asset);
        }

        var uplot = await server.Client.GetStringAsync("/admin/assets/uPlot.iife.min.js");
        Assert.Contains("uPlot", uplot, StringComparison.Ordinal);
        using var missing = await server.Client.GetAsync("/admin/assets/../admin.cs");
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
    }

    [Fact]
    public async Task Rebuilds_Registered_ListedUntilDisposed()
    {
        await using var server = await RunningServer.StartAsync();
        var empty = await server.GetJsonAsync("/admin/rebuilds");
        Assert.Empty(empty.GetProperty("rebuilds").EnumerateArray());

        using (server.Host.Rebuilds.Register(() => new RebuildBar("orders-by-total", RebuildPhase.Bulk, 40, 100, TimeSpan.FromSeconds(12))))
        {
            var list = await server.GetJsonAsync("/admin/rebuilds");
            var rebuild = Assert.Single(list.GetProperty("rebuilds").EnumerateArray());
            Assert.Equal("orders-by-total", rebuild.GetProperty("index").GetString());
            Assert.Equal(40, rebuild.GetProperty("documentsDone").GetInt64());
            Assert.Equal(JsonValueKind.Null, rebuild.GetProperty("resumedAfter").ValueKind);
        }

        // A run that resumed an interrupted bulk phase says after which id, and how much it skipped.
        using (server.Host.Rebuilds.Register(() => new RebuildBar("orders-by-total", RebuildPhase.Bulk, 70, 100, null, "orders/0000061", 60, TimeSpan.FromSeconds(2.5))))
        {
            var rebuild = Assert.Single((await server.GetJsonAsync("/admin/rebuilds")).GetProperty("rebuilds").EnumerateArray());
            Assert.Equal("orders/0000061", rebuild.GetProperty("resumedAfter").GetString());
            Assert.Equal(60, rebuild.GetProperty("documentsSkipped").GetInt64());
            // The bulk phase's commit cadence: what a crash would cost the resume.
            Assert.Equal("00:00:02.5000000", rebuild.GetProperty("bulkCommitInterval").GetString());
        }

        var after = await server.GetJsonAsync("/admin/rebuilds");
        Assert.Empty(after.GetProperty("rebuilds").EnumerateArray());
    }

    // A rebuild's prefetch, once its bulk phase ended, is listed below the running ones as finished, in
    // the JSON and the event stream alike, with its final figures; /metrics exports running ones only.
    [Fact]
    public async Task Prefetch_AfterARebuild_ItsPrefetchListedAsFinished_InJsonAndStream_NotInMetrics()
    {
        const string rebuild = "rebuild orders-by-status";
        await using var server = await RunningServer.StartAsync();
        var documents = server.LoadOrders(1_000_000);
        await server.DefineIndexAsync("""
            {"name": "orders-by-status", "collection": "orders", "fields": [{"name": "status", "path": "status", "type": "keyword"}]}
            """, documents);
        var scan = server.StartPrefetch("scan");
        await WaitUntilAsync(() => scan.Pressure.DocumentsDone > 0);

        var list = await server.GetJsonAsync("/admin/prefetch");
        JsonElement streamed;
        using (var timeout = new CancellationTokenSource(_hangGuard))
        using (var response = await server.Client.GetAsync("/admin/prefetch/stream", HttpCompletionOption.ResponseHeadersRead, timeout.Token))
        {
            await using var stream = await response.Content.ReadAsStreamAsync(timeout.Token);
            await using var events = SseParser.Create(stream).EnumerateAsync(timeout.Token).GetAsyncEnumerator(timeout.Token);
            Assert.True(await events.MoveNextAsync());
            streamed = JsonDocument.Parse(events.Current.Data).RootElement.Clone();
        }

        var exposition = PrometheusText.Parse(await server.Client.GetStringAsync("/metrics"));
        using var limited = await server.Client.PutAsync("/admin/prefetch/limits", RunningServer.Json("""{"maxConcurrency": 2}"""));
        var limitedBody = await limited.Content.ReadFromJsonAsync<JsonElement>();

        Assert.Equal("scan", Assert.Single(list.GetProperty("prefetches").EnumerateArray()).GetProperty("name").GetString());
        var finished = Assert.Single(list.GetProperty("finished").EnumerateArray());
        Assert.Equal(rebuild, finished.GetProperty("name").GetString());
        Assert.Equal(JsonValueKind.Null, finished.GetProperty("limits").ValueKind);
        var finishedAt = finished.GetProperty("finishedAt").GetDateTimeOffset();
        var pressure = finished.GetProperty("pressure");
        Assert.Equal("completed", pressure.GetProperty("state").GetString());
        Assert.Equal(finishedAt, pressure.GetProperty("timestamp").GetDateTimeOffset());
        Assert.Equal(documents, pressure.GetProperty("documentsDone").GetInt64());
        Assert.Equal(JsonValueKind.Array, pressure.GetProperty("history").ValueKind);
        Assert.Equal(JsonValueKind.Array, pressure.GetProperty("recentDecisions").ValueKind);
        // The running prefetch has no end: its view carries no finishedAt.
        Assert.False(list.GetProperty("prefetches")[0].TryGetProperty("finishedAt", out _));

        Assert.Equal("scan", Assert.Single(streamed.GetProperty("prefetches").EnumerateArray()).GetProperty("name").GetString());
        Assert.Equal(finished.ToString(), Assert.Single(streamed.GetProperty("finished").EnumerateArray()).ToString());

        exposition.Single("indexing_prefetch_documents_done", "scan");
        Assert.DoesNotContain(exposition.Samples, s => s.Labels.GetValueOrDefault("prefetch") == rebuild);

        // A limits change answers with what it changed, running ones only.
        Assert.Equal(HttpStatusCode.OK, limited.StatusCode);
        Assert.Equal("scan", Assert.Single(limitedBody.GetProperty("prefetches").EnumerateArray()).GetProperty("name").GetString());
        Assert.False(limitedBody.TryGetProperty("finished", out _));
    }

    // Two indexes over one collection defined together share one read: each rebuild's prefetch
    // names the indexes that read fed while it read, and both read the same documents.
    [Fact]
    public async Task Prefetch_TwoIndexesDefinedTogether_ShowTheSharedPassAndTheBuildersItFed()
    {
        // A long window: both join however loaded the machine.
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [Hosting.ServerOptions.SharedPassWindowSetting] = "10s" });
        var documents = server.LoadOrders(1_000_000);
        server.Host.Engine.Indexes.CreateOrUpdate(Indexer.IndexDefinition.Parse(
            """{"name": "by-status", "collection": "orders", "fields": [{"name": "status", "path": "status", "type": "keyword"}]}"""));
        server.Host.Engine.Indexes.CreateOrUpdate(Indexer.IndexDefinition.Parse(
            """{"name": "by-total", "collection": "orders", "fields": [{"name": "total", "path": "total", "type": "double"}]}"""));
        await server.Host.Engine.WaitForRebuildAsync("by-status");
        await server.Host.Engine.WaitForRebuildAsync("by-total");

        var finished = (await server.GetJsonAsync("/admin/prefetch")).GetProperty("finished").EnumerateArray().ToList();

        Assert.Equal(["rebuild by-status", "rebuild by-total"], finished.Select(f => f.GetProperty("name").GetString()).Order(StringComparer.Ordinal));
        Assert.All(finished, f => Assert.Equal(documents, f.GetProperty("pressure").GetProperty("documentsDone").GetInt64()));
        // The first to finish left the other still reading: its record names both.
        var shared = finished.Select(f => f.GetProperty("pressure").GetProperty("sharedBy")).Where(s => s.ValueKind == JsonValueKind.Array).ToList();
        Assert.NotEmpty(shared);
        Assert.Equal(["by-status", "by-total"], shared[0].EnumerateArray().Select(name => name.GetString()).Order(StringComparer.Ordinal));
    }

    [Fact]
    public async Task Registry_SameNameTwice_Throws()
    {
        await using var server = await RunningServer.StartAsync();
        server.LoadOrders(500_000);
        var source = server.StartPrefetch("scan");
        var error = Assert.Throws<InvalidOperationException>(() => server.Host.Engine.Prefetches.Register("scan", source));
        Assert.Contains("'scan' is already registered", error.Message, StringComparison.Ordinal);
    }

    internal static async Task WaitUntilAsync(Func<bool> condition)
    {
        using var timeout = new CancellationTokenSource(_hangGuard);
        while (!condition())
        {
            await Task.Delay(20, timeout.Token);
        }
    }
}
