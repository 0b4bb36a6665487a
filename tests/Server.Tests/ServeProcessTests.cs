using System.Diagnostics;
using System.Net;
using System.Text;
using Indexing.Storage;

namespace Indexing.Server.Tests;

/// <summary>
/// The server as a user runs it: the built executable started with `serve`, spoken to over HTTP,
/// stopped with SIGTERM. The store is then opened directly to count what survived.
/// </summary>
public sealed class ServeProcessTests : IDisposable
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);
    private readonly TempDirectory _directory = new("indexing-serve-tests");

    [Fact]
    public async Task Serve_LoadAndIndexOverHttpThenSigterm_StopsWithinSecondsAndEveryDocumentIsInTheStore()
    {
        using var server = IndexingProcess.Start("serve", _directory.Path, "--port", "0", "--Storage:MaxDocumentBytes=64KiB");
        var baseAddress = await server.WaitForAddressAsync(_hangGuard);
        using var client = new HttpClient { BaseAddress = baseAddress, Timeout = _hangGuard };

        for (var i = 0; i < 20; i++)
        {
            using var put = await client.PutAsync($"/docs/orders/single-{i:D3}", RunningServer.Json($$"""{"n": {{i}}}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        var bulk = new StringBuilder();
        for (var i = 0; i < 500; i++)
        {
            bulk.Append($$$"""{"id": "orders/bulk-{{{i:D4}}}", "doc": {"n": {{{i}}}, "pad": "{{{new string('p', 200)}}}"}}""").Append('\n');
        }

        using (var response = await client.PostAsync("/docs/bulk", new StringContent(bulk.ToString(), Encoding.UTF8, "application/x-ndjson")))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Contains("\"stored\":500", await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        }

        Assert.Equal("""{"n": 7}""", await client.GetStringAsync("/docs/orders/single-007"));

        // The ASP.NET Core style argument reached the configuration: 64 KiB is the limit now.
        using (var big = await client.PutAsync("/docs/orders/big", RunningServer.Json("{\"pad\": \"" + new string('x', 70_000) + "\"}")))
        {
            Assert.Equal(HttpStatusCode.RequestEntityTooLarge, big.StatusCode);
        }

        // An index over what was loaded, queried once the build has caught up.
        using (var defined = await client.PutAsync("/indexes/orders-by-n", RunningServer.Json(
            """{"name": "orders-by-n", "collection": "orders", "fields": [{"name": "n", "path": "n", "type": "long"}]}""")))
        {
            Assert.Equal(HttpStatusCode.Created, defined.StatusCode);
        }

        using (var timeout = new CancellationTokenSource(_hangGuard))
        {
            // The first build is done (a new index serves partial results while it builds, so the
            // query alone can match before then, and a rebuild asked for meanwhile is refused
            // with 409); n = 7 is one single and one bulk document.
            while (!(await client.GetStringAsync("/indexes/orders-by-n/rebuild", timeout.Token)).Contains("\"phase\":\"done\"", StringComparison.Ordinal)
                || !(await client.GetStringAsync("/indexes/orders-by-n/query?q=n:7", timeout.Token)).Contains("\"totalHits\":2", StringComparison.Ordinal))
            {
                await Task.Delay(100, timeout.Token);
            }
        }

        // Rebuild it side by side while writing: 20 more documents go in during the rebuild.
        using (var rebuild = await client.PostAsync("/indexes/orders-by-n/rebuild", content: null))
        {
            Assert.Equal(HttpStatusCode.Accepted, rebuild.StatusCode);
        }

        for (var i = 0; i < 20; i++)
        {
            using var put = await client.PutAsync($"/docs/orders/during-{i:D2}", RunningServer.Json("""{"n": 7}"""));
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        using (var timeout = new CancellationTokenSource(_hangGuard))
        {
            // Done, and the new generation holds the writes made during the rebuild (n = 7: 2 + 20).
            while (!(await client.GetStringAsync("/indexes/orders-by-n/rebuild", timeout.Token)).Contains("\"phase\":\"done\"", StringComparison.Ordinal)
                || !(await client.GetStringAsync("/indexes/orders-by-n/query?q=n:7", timeout.Token)).Contains("\"totalHits\":22", StringComparison.Ordinal))
            {
                await Task.Delay(100, timeout.Token);
            }
        }

        var stopwatch = Stopwatch.StartNew();
        server.Terminate();
        var exitCode = await server.WaitForExitAsync(_hangGuard);
        stopwatch.Stop();
        Assert.True(exitCode == 0, $"exit code {exitCode}; output:\n{server.Output}");
        Assert.Contains("stopped; the store is closed", server.Output, StringComparison.Ordinal);
        // Generous: the promise is "a few seconds"; this guards against waiting out the host's 30 s
        // shutdown timeout, with room for a loaded machine.
        Assert.True(stopwatch.Elapsed < TimeSpan.FromSeconds(20), $"shutdown took {stopwatch.Elapsed}");

        using var store = DocumentStore.Open(Path.Combine(_directory.Path, "store"));
        var ids = store.ScanMetadata().Select(m => m.Id).ToList();
        Assert.Equal(540, ids.Count);
        Assert.Equal("""{"n": 19}""", Encoding.UTF8.GetString(store.Get("orders/single-019")!.Value.Body));
        Assert.StartsWith("""{"n": 499,""", Encoding.UTF8.GetString(store.Get("orders/bulk-0499")!.Value.Body), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Serve_SigtermDuringASlowBulkUpload_LetsTheUploadFinishThenClosesTheStore()
    {
        using var server = IndexingProcess.Start("serve", _directory.Path, "--port", "0");
        var baseAddress = await server.WaitForAddressAsync(_hangGuard);
        using var client = new HttpClient { BaseAddress = baseAddress, Timeout = _hangGuard };
        var mayFinish = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var upload = new TwoPartNdjson(BulkLines(0, DocumentStore.BulkChunkDocuments), BulkLines(DocumentStore.BulkChunkDocuments, 5000), mayFinish.Task);
        var posting = client.PostAsync("/docs/bulk", upload);

        // The first part is one whole chunk: once its first document reads back, the request is in
        // the server's hands, mid-body.
        using (var timeout = new CancellationTokenSource(_hangGuard))
        {
            while ((await client.GetAsync("/docs/orders/slow-0000", timeout.Token)).StatusCode != HttpStatusCode.OK)
            {
                await Task.Delay(50, timeout.Token);
            }
        }

        server.Terminate();
        // Longer than System.CommandLine's default 2 s grace for a command to stop: the process must
        // still be waiting for the request in progress, not ended with it half-read.
        await Task.Delay(TimeSpan.FromSeconds(5));
        Assert.False(server.HasExited, $"serve exited while a request was in progress:\n{server.Output}");
        mayFinish.SetResult();

        using (var response = await posting.WaitAsync(_hangGuard))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Contains("\"stored\":5000", await response.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        }

        var exitCode = await server.WaitForExitAsync(_hangGuard);
        Assert.True(exitCode == 0, $"exit code {exitCode}; output:\n{server.Output}");
        Assert.Contains("stopped; the store is closed", server.Output, StringComparison.Ordinal);
        using var store = DocumentStore.Open(Path.Combine(_directory.Path, "store"));
        Assert.Equal(5000, store.ScanMetadata().Count());
        Assert.Equal("""{"n": 4999}""", Encoding.UTF8.GetString(store.Get("orders/slow-4999")!.Value.Body));
    }

    [Fact]
    public async Task Serve_StoppedWhileStarting_ExitsZeroAndClosesTheStore()
    {
        using var stopped = new CancellationTokenSource();
        await stopped.CancelAsync();
        var output = new StringWriter(System.Globalization.CultureInfo.InvariantCulture);

        var code = await Cli.CommandLine.Build().Parse(["serve", "--data", _directory.Path, "--port", "0"])
            .InvokeAsync(new System.CommandLine.InvocationConfiguration { Output = output, Error = output }, stopped.Token);

        Assert.True(code == 0, output.ToString());
        // The host closed what it had opened: the store's lock is free again.
        using var store = DocumentStore.Open(Path.Combine(_directory.Path, "store"));
        Assert.Empty(store.ScanMetadata());
    }

    [Fact]
    public async Task Serve_AnyAddressWithoutKey_ExitsWithTheReasonAndCreatesNothing()
    {
        using var server = IndexingProcess.Start("serve", _directory.Path, "--address", "0.0.0.0", "--port", "0");
        var exitCode = await server.WaitForExitAsync(_hangGuard);
        Assert.Equal(2, exitCode);
        Assert.Contains("Server:ApiKey is not set", server.Output, StringComparison.Ordinal);
        Assert.False(Directory.Exists(Path.Combine(_directory.Path, "store")));
    }

    [Fact]
    public async Task Serve_IndexCatalogMissingWhileIndexDirectoriesExist_ExitsWithTheReasonAndDeletesNothing()
    {
        var generation = Path.Combine(_directory.Path, "indexes", "orders", "g000001");
        Directory.CreateDirectory(generation);
        await File.WriteAllTextAsync(Path.Combine(generation, "kept.txt"), "a file of the index");

        using var server = IndexingProcess.Start("serve", _directory.Path, "--port", "0");
        var exitCode = await server.WaitForExitAsync(_hangGuard);

        // A refusal an operator can act on, not a crash: the reason names the file, without a stack trace.
        Assert.True(exitCode == 2, $"exit code {exitCode}; output:\n{server.Output}");
        Assert.Contains("catalog.json", server.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("Unhandled exception", server.Output, StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", server.Output, StringComparison.Ordinal);
        Assert.True(File.Exists(Path.Combine(generation, "kept.txt")));
    }

    public void Dispose() => _directory.Dispose();

    private static string BulkLines(int from, int to)
    {
        var lines = new StringBuilder();
        for (var i = from; i < to; i++)
        {
            lines.Append($$$"""{"id": "orders/slow-{{{i:D4}}}", "doc": {"n": {{{i}}}}}""").Append('\n');
        }

        return lines.ToString();
    }

    /// <summary>An NDJSON body sent in two parts, the second only once <paramref name="mayFinish"/> completes (chunked, no length).</summary>
    private sealed class TwoPartNdjson : HttpContent
    {
        private readonly string _first;
        private readonly string _second;
        private readonly Task _mayFinish;

        public TwoPartNdjson(string first, string second, Task mayFinish)
        {
            (_first, _second, _mayFinish) = (first, second, mayFinish);
            Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/x-ndjson");
        }

        protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context)
        {
            await stream.WriteAsync(Encoding.UTF8.GetBytes(_first));
            await stream.FlushAsync();
            await _mayFinish;
            await stream.WriteAsync(Encoding.UTF8.GetBytes(_second));
        }

        protected override bool TryComputeLength(out long length)
        {
            length = -1;
            return false;
        }
    }
}
