using System.IO.Pipelines;
using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Indexing.Engine;
using Indexing.Server.Hosting;
using Indexing.Server.Loading;
using Indexing.Storage;

namespace Indexing.Server.Tests;

public sealed class BulkLoadTests
{
    [Fact]
    public void RestatedStoreRules_AreTheStores()
    {
        // The load restates them because they are not part of the engine's public surface.
        Assert.Equal(DocumentStore.BulkChunkBytes, BulkLoad.ChunkBytes);
        Assert.Equal(DocumentStore.BulkChunkDocuments, BulkLoad.ChunkDocuments);
        Assert.Equal(DocumentBodies.MaxDepth, BulkLoad.BodyMaxDepth);
    }

    [Fact]
    public async Task Load_DocumentOverTheLimit_MessageNamesTheCallersLimitSetting()
    {
        // The measure command calls the limit --max-document-size; Storage calls it StoreOptions.MaxDocumentBytes.
        using var directory = new TempDirectory("indexing-bulk-load-tests");
        await using var engine = IndexingEngine.Open(new EngineOptions
        {
            DataDirectory = directory.Path,
            Storage = new StoreOptions(maxDocumentBytes: 1 << 10, syncWrites: false),
        });
        var line = "{\"id\": \"orders/1\", \"doc\": {\"note\": \"" + new string('x', 2000) + "\"}}\n";

        var result = await BulkLoad.LoadAsync(
            PipeReader.Create(new MemoryStream(Encoding.UTF8.GetBytes(line))), engine, "--max-document-size", progress: null, CancellationToken.None);

        var error = Assert.Single(result.Errors);
        Assert.Equal("BodyTooLarge", error.Rule);
        Assert.Contains("the limit is 1 KiB (--max-document-size)", error.Message, StringComparison.Ordinal);
        Assert.Contains("or raise --max-document-size", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain(StoreOptions.MaxDocumentBytesName, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Bulk_MixedLines_GoodStoredBadReportedWithLineNumbersAndRules()
    {
        await using var server = await RunningServer.StartAsync();
        var body = string.Join("\n",
            """{"id": "orders/1", "doc": {"total": 1}}""",
            """{"id": "orders/2", "doc": [1]}""",
            "",
            """{"id": "orders/3", "doc": {"total": 3}""",
            """{"id": 4, "doc": {}}""",
            """{"doc": {"total": 5}}""",
            """{"id": "orders/6", "doc": {"total": 6}, "extra": 1}""",
            """{"id": "/bad", "doc": {"total": 7}}""",
            """{"id": "orders/8", "doc": {"total": 8}}""") + "\n";

        var result = await PostBulkAsync(server, body);

        Assert.Equal(9, result.GetProperty("lines").GetInt64());
        Assert.Equal(2, result.GetProperty("stored").GetInt64());
        Assert.Equal(6, result.GetProperty("failed").GetInt64());
        var errors = result.GetProperty("errors").EnumerateArray()
            .Select(e => (Line: e.GetProperty("line").GetInt64(), Rule: e.GetProperty("rule").GetString(), Message: e.GetProperty("message").GetString()!))
            .ToList();
        Assert.Equal(
            [(2L, "BodyNotObject"), (4L, "LineMalformedJson"), (5L, "LineIdNotString"), (6L, "LineMissingId"), (7L, "LineUnknownProperty"), (8L, "IdEmptyCollection")],
            errors.Select(e => (e.Line, e.Rule)));
        Assert.All(errors, e => Assert.StartsWith($"line {e.Line}", e.Message, StringComparison.Ordinal));
        Assert.Contains("'extra'", errors[4].Message, StringComparison.Ordinal);

        Assert.Equal("""{"total": 1}""", Encoding.UTF8.GetString(server.Store.Get("orders/1")!.Value.Body));
        Assert.Equal("""{"total": 8}""", Encoding.UTF8.GetString(server.Store.Get("orders/8")!.Value.Body));
        Assert.Equal(["orders/1", "orders/8"], server.Store.ScanMetadata().Select(m => m.Id));
    }

    [Fact]
    public async Task Bulk_LineOverLimit_SkippedUnreadOthersStoredAndLastLineWithoutNewlineCounts()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxDocumentBytesSetting] = "4KiB" });
        var giant = "{\"id\": \"orders/giant\", \"doc\": {\"note\": \"" + new string('x', 200_000) + "\"}}";
        var body = """{"id": "orders/1", "doc": {"a": 1}}""" + "\r\n" + giant + "\n" + """{"id": "orders/3", "doc": {"a": 3}}""";

        var result = await PostBulkAsync(server, body);

        Assert.Equal(3, result.GetProperty("lines").GetInt64());
        Assert.Equal(2, result.GetProperty("stored").GetInt64());
        var error = Assert.Single(result.GetProperty("errors").EnumerateArray());
        Assert.Equal(2, error.GetProperty("line").GetInt64());
        Assert.Equal("LineTooLong", error.GetProperty("rule").GetString());
        Assert.Contains("Storage:MaxDocumentBytes", error.GetProperty("message").GetString(), StringComparison.Ordinal);
        Assert.Null(server.Store.Get("orders/giant"));
        Assert.NotNull(server.Store.Get("orders/3"));
    }

    [Fact]
    public async Task Bulk_DocumentOverLimitButLineUnderCap_RefusedAsBodyTooLarge()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxDocumentBytesSetting] = "4KiB" });
        var body = "{\"id\": \"orders/big\", \"doc\": {\"note\": \"" + new string('x', 5000) + "\"}}\n";

        var result = await PostBulkAsync(server, body);

        Assert.Equal(0, result.GetProperty("stored").GetInt64());
        Assert.Equal("BodyTooLarge", result.GetProperty("errors")[0].GetProperty("rule").GetString());
        Assert.Equal(0, server.Store.LastEtag);
    }

    [Fact]
    public async Task Bulk_ManyChunksStreamed_EveryDocumentStoredOnceWithConsecutiveEtags()
    {
        await using var server = await RunningServer.StartAsync();
        const int Count = 12_000;
        var body = new StringBuilder();
        for (var i = 0; i < Count; i++)
        {
            body.Append("{\"id\": \"orders/").Append(i.ToString("D6", System.Globalization.CultureInfo.InvariantCulture))
                .Append("\", \"doc\": {\"n\": ").Append(i).Append(", \"pad\": \"").Append('p', 900).Append("\"}}\n");
        }

        // About 11 MB, streamed without Content-Length: more than one 8 MiB chunk and than the pipe's buffers.
        using var content = new StreamContent(new MemoryStream(Encoding.UTF8.GetBytes(body.ToString())));
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/x-ndjson");
        using var request = new HttpRequestMessage(HttpMethod.Post, "/docs/bulk") { Content = content };
        request.Headers.TransferEncodingChunked = true;
        using var response = await server.Client.SendAsync(request);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        var result = await response.Content.ReadFromJsonAsync<JsonElement>();

        Assert.Equal(Count, result.GetProperty("stored").GetInt64());
        Assert.Equal(0, result.GetProperty("failed").GetInt64());
        Assert.Equal(Count - 1, result.GetProperty("lastEtag").GetInt64() - result.GetProperty("firstEtag").GetInt64());
        Assert.Equal(Count, server.Store.ScanMetadata().Count());
    }

    [Fact]
    public async Task Bulk_LargerThanKestrelBodyLimit_Accepted()
    {
        // The global request body cap is the document limit plus slack (4 KiB + 64 KiB here); bulk lifts it.
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?> { [ServerOptions.MaxDocumentBytesSetting] = "4KiB" });
        var line = "{\"id\": \"orders/{0}\", \"doc\": {\"pad\": \"" + new string('p', 3000) + "\"}}\n";
        var body = string.Concat(Enumerable.Range(0, 100).Select(i => line.Replace("{0}", i.ToString(System.Globalization.CultureInfo.InvariantCulture), StringComparison.Ordinal)));
        Assert.True(body.Length > 68 << 10);

        var result = await PostBulkAsync(server, body);

        Assert.Equal(100, result.GetProperty("stored").GetInt64());
    }

    private static async Task<JsonElement> PostBulkAsync(RunningServer server, string body)
    {
        using var response = await server.Client.PostAsync("/docs/bulk", new StringContent(body, Encoding.UTF8, "application/x-ndjson"));
        var text = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{(int)response.StatusCode}: {text}");
        return JsonDocument.Parse(text).RootElement.Clone();
    }
}
