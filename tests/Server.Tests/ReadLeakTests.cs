using System.Net;
using System.Text.Json;
using Indexing.Indexer;
using Indexing.Server.Hosting;
using Indexing.Server.Http;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Tests;

/// <summary>
/// What reads may show: never a file system path; an engine's exception text (failure texts: errors
/// and notes) only to requests that proved the full API key, never to the read-only key.
/// </summary>
public sealed class ReadLeakTests
{
    private const string Key = "0123456789abcdef-test-key";
    private const string ReadKey = "fedcba9876543210-read-key";
    private const string Definition = """
        {"name": "by-n", "collection": "orders", "fields": [{"name": "n", "path": "n", "type": "long"}]}
        """;

    [Fact]
    public async Task IndexReads_NeverShowTheDataDirectory()
    {
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/1", """{"n": 1}""");

        var bodies = new List<string>();
        using (var put = await server.Client.PutAsync("/indexes/by-n", RunningServer.Json(Definition)))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            bodies.Add(await put.Content.ReadAsStringAsync());
        }

        await server.DefineIndexAsync(Definition, 1);
        foreach (var path in new[] { "/indexes", "/indexes/by-n", "/indexes/by-n/rebuild", "/admin/prefetch", "/admin/rebuilds" })
        {
            using var response = await server.Client.GetAsync(path);
            bodies.Add(await response.Content.ReadAsStringAsync());
        }

        foreach (var body in bodies)
        {
            Assert.DoesNotContain(server.Directory, body, StringComparison.Ordinal);
            Assert.DoesNotContain(Path.GetTempPath().TrimEnd('/'), body, StringComparison.Ordinal);
            Assert.DoesNotContain("\"directory\"", body, StringComparison.Ordinal);
        }

        // The summary is still whole otherwise.
        var summary = JsonDocument.Parse(bodies[2]).RootElement;
        Assert.Equal(1, summary.GetProperty("status").GetProperty("documentCount").GetInt64());
    }

    [Fact]
    public void FailureTexts_WithTheReadKeyWithheld_WithTheFullKeyShownWithTheDataDirectoryAsPlaceholder()
    {
        var data = Path.Combine(Path.GetTempPath(), "indexing-leak-test-data");
        var texts = new FailureTexts(data);
        var error = $"index 'by-n': commit failed: IOException: No space left on device : '{data}/indexes/by-n/g000002/_3.cfs'";
        var summary = Summary(error);

        var reader = texts.Summary(summary, Request(key: Key, presented: ReadKey));
        var withKey = texts.Summary(summary, Request(key: Key, presented: Key));
        var loopbackWithoutKey = texts.Summary(summary, Request(key: null, presented: null));

        foreach (var hidden in new[]
                 {
                     reader.Status.LastError, reader.Status.LastDocumentFailure, reader.Rebuild!.Error, reader.Rebuild.Note, reader.LastRebuild!.Error,
                     reader.LastRebuild.Note,
                 })
        {
            Assert.Equal(FailureTexts.Withheld, hidden);
        }

        Assert.Equal("index 'by-n': commit failed: IOException: No space left on device : '<data>/indexes/by-n/g000002/_3.cfs'", withKey.Status.LastError);
        Assert.Equal(withKey.Status.LastError, loopbackWithoutKey.Status.LastError);
        Assert.Equal(withKey.Status.LastError, withKey.Rebuild!.Error);
        Assert.Equal(withKey.Status.LastError, withKey.Rebuild.Note);
        Assert.Equal(withKey.Status.LastError, withKey.LastRebuild!.Note);
        Assert.DoesNotContain(data, JsonSerializer.Serialize(withKey), StringComparison.Ordinal);
        // Not a failure text: what the index did with a value is shown to readers, without paths.
        Assert.Equal("document 'orders/2': field 'n' is a string", reader.Status.LastMismatch);
    }

    [Fact]
    public async Task IndexReads_LastRebuildFailedWithPaths_ReadKeySeesNoPathNorRawText_FullKeySeesPlaceholder()
    {
        using var directory = new TempDirectory("indexing-leak-tests");
        var data = Path.GetFullPath(directory.Path);
        await using (var first = await ServerHost.StartAsync(directory.Path, [], RunningServer.Defaults(), CancellationToken.None))
        {
            first.Engine.Store.Put("orders/1", """{"n": 1}""");
            first.Engine.Indexes.CreateOrUpdate(IndexDefinition.Parse(Definition));
            await first.Engine.Indexes.WaitForRebuildAsync("by-n").WaitAsync(TimeSpan.FromSeconds(60));
        }

        // How the last run's rebuilds ended, as it persisted them: a cancelled one whose replacement
        // could not be removed (the note quotes the exception and the directory), a failed one whose
        // error quotes the file the engine could not write.
        var error = $"IndexWriteException: index 'by-n': commit failed: IOException: No space left on device : '{data}/indexes/by-n/g000002/_0.cfs'";
        var note = $"generation 3 could not be removed (IOException: Directory not empty : '{data}/indexes/by-n/g000003'); the next start deletes its directory";
        var catalogPath = Path.Combine(data, "indexes", "catalog.json");
        var catalog = System.Text.Json.Nodes.JsonNode.Parse(await File.ReadAllTextAsync(catalogPath))!;
        var entry = catalog["indexes"]!["by-n"]!;
        var started = DateTimeOffset.UtcNow.AddMinutes(-1);
        entry["lastRebuild"] = new System.Text.Json.Nodes.JsonObject
        {
            ["generation"] = 3, ["phase"] = "cancelled", ["startedAt"] = started, ["endedAt"] = started.AddSeconds(30), ["error"] = error, ["note"] = note,
        };
        await File.WriteAllTextAsync(catalogPath, catalog.ToJsonString());

        await using var second = await ServerHost.StartAsync(directory.Path, [], RunningServer.Defaults(new Dictionary<string, string?>
        {
            [ServerOptions.ApiKeySetting] = Key,
            [ServerOptions.ReadApiKeySetting] = ReadKey,
        }), CancellationToken.None);
        using var client = new HttpClient { BaseAddress = second.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };
        Assert.Equal(note, second.Engine.Indexes.GetSummary("by-n").LastRebuild?.Note);

        foreach (var path in new[] { "/indexes/by-n", "/indexes" })
        {
            using var anonymous = await client.GetAsync(path);
            Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);

            var read = await GetAsync(client, path, ReadKey);
            Assert.DoesNotContain(data, read, StringComparison.Ordinal);
            Assert.DoesNotContain("<data>", read, StringComparison.Ordinal);
            Assert.DoesNotContain("IOException", read, StringComparison.Ordinal);
            Assert.DoesNotContain("could not be removed", read, StringComparison.Ordinal);
            var last = LastRebuild(read, path);
            Assert.Equal(FailureTexts.Withheld, last.GetProperty("note").GetString());
            Assert.Equal(FailureTexts.Withheld, last.GetProperty("error").GetString());
            Assert.Equal("cancelled", last.GetProperty("phase").GetString());

            var full = await GetAsync(client, path, Key);
            Assert.DoesNotContain(data, full, StringComparison.Ordinal);
            Assert.Equal(note.Replace(data, "<data>", StringComparison.Ordinal), LastRebuild(full, path).GetProperty("note").GetString());
            Assert.Equal(error.Replace(data, "<data>", StringComparison.Ordinal), LastRebuild(full, path).GetProperty("error").GetString());
        }
    }

    private static async Task<string> GetAsync(HttpClient client, string path, string key)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.Add("X-Api-Key", key);
        using var response = await client.SendAsync(request);
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"GET {path}: {(int)response.StatusCode} {body}");
        return body;
    }

    private static JsonElement LastRebuild(string body, string path)
    {
        var root = JsonDocument.Parse(body).RootElement;
        var summary = path == "/indexes" ? root.GetProperty("indexes")[0] : root;
        return summary.GetProperty("lastRebuild").Clone();
    }

    [Fact]
    public async Task UnexpectedFailure_500ProblemWithoutTheExceptionsText()
    {
        await using var server = await RunningServer.StartAsync();
        // Closed under the server: the next index read throws ObjectDisposedException inside the endpoint.
        await server.Host.Engine.Indexes.DisposeAsync();

        using var response = await server.Client.GetAsync("/indexes/by-n");

        Assert.Equal(HttpStatusCode.InternalServerError, response.StatusCode);
        var body = await response.Content.ReadAsStringAsync();
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        foreach (var leak in new[] { "IndexManager", "disposed", "Exception", " at Indexing.", server.Directory })
        {
            Assert.DoesNotContain(leak, body, StringComparison.Ordinal);
        }
    }

    private static DefaultHttpContext Request(string? key, string? presented)
    {
        var readKey = key is null ? null : ReadKey;
        var context = new DefaultHttpContext();
        context.Request.Method = "GET";
        context.Request.Path = "/indexes/by-n";
        if (presented is not null)
        {
            context.Request.Headers["X-Api-Key"] = presented;
        }

        new ApiKeyGate(key, readKey).InvokeAsync(context, _ => Task.CompletedTask).GetAwaiter().GetResult();
        return context;
    }

    private static IndexSummary Summary(string error)
    {
        var status = new IndexStatus("by-n", "/somewhere/g000001", IndexState.Error, false, false, "hash", "hash", 1, 1, 1, 1, error, 1,
            "document 'orders/2': field 'n' is a string", 5, error, 0);
        var progress = new RebuildProgress("by-n", 2, RebuildPhase.Failed, "definition changed", DateTimeOffset.UnixEpoch, 0, 0, 0, 0, 0, 0, 0, null,
            new Dictionary<RebuildPhase, TimeSpan>(), error, error, null, null);
        return new IndexSummary(
            "by-n", "orders", 1, "hash", status, 0, progress, new RebuildSummary(2, RebuildPhase.Failed, DateTimeOffset.UnixEpoch, DateTimeOffset.UnixEpoch, error, error));
    }
}
