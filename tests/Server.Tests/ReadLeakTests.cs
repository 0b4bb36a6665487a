using System.Net;
using System.Text.Json;
using Indexing.Indexer;
using Indexing.Server.Hosting;
using Indexing.Server.Http;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Tests;

/// <summary>
/// What reads that need no key may show: never a file system path, never an engine's exception
/// text; failure texts only to requests that proved the API key.
/// </summary>
public sealed class ReadLeakTests
{
    private const string Key = "0123456789abcdef-test-key";
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
    public void FailureTexts_WithoutTheKeyWithheld_WithItShownWithTheDataDirectoryAsPlaceholder()
    {
        var data = Path.Combine(Path.GetTempPath(), "indexing-leak-test-data");
        var texts = new FailureTexts(data);
        var error = $"index 'by-n': commit failed: IOException: No space left on device : '{data}/indexes/by-n/g000002/_3.cfs'";
        var summary = Summary(error);

        var anonymous = texts.Summary(summary, Request(key: Key, presented: null));
        var withKey = texts.Summary(summary, Request(key: Key, presented: Key));
        var loopbackWithoutKey = texts.Summary(summary, Request(key: null, presented: null));

        foreach (var hidden in new[]
                 {
                     anonymous.Status.LastError, anonymous.Status.LastDocumentFailure, anonymous.Rebuild!.Error, anonymous.Rebuild.Note, anonymous.LastRebuild!.Error,
                     anonymous.LastRebuild.Note,
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
        // Not a failure text: what the index did with a value is shown to everyone, without paths.
        Assert.Equal("document 'orders/2': field 'n' is a string", anonymous.Status.LastMismatch);
    }

    [Fact]
    public async Task UnexpectedFailure_500ProblemWithoutTheExceptionsText()
    {
        await using var server = await RunningServer.StartAsync();
        // Closed under the server: the next index read throws ObjectDisposedException inside the endpoint.
        await server.Host.Indexes.DisposeAsync();

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
        var context = new DefaultHttpContext();
        context.Request.Method = "GET";
        context.Request.Path = "/indexes/by-n";
        if (presented is not null)
        {
            context.Request.Headers["X-Api-Key"] = presented;
        }

        new ApiKeyGate(key).InvokeAsync(context, _ => Task.CompletedTask).GetAwaiter().GetResult();
        return context;
    }

    private static IndexSummary Summary(string error)
    {
        var metrics = new IndexMetrics(0, 0, 0, 0, 0, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero);
        var status = new IndexStatus("by-n", "/somewhere/g000001", IndexState.Error, false, false, "hash", "hash", 1, 1, 1, 1, error, 1,
            "document 'orders/2': field 'n' is a string", 5, error, 0, metrics);
        var progress = new RebuildProgress("by-n", 2, RebuildPhase.Failed, "definition changed", DateTimeOffset.UnixEpoch, 0, 0, 0, 0, 0, 0, 0, null,
            new Dictionary<RebuildPhase, TimeSpan>(), error, error, null, null);
        return new IndexSummary(
            "by-n", "orders", 1, "hash", status, 0, progress, new RebuildSummary(2, RebuildPhase.Failed, DateTimeOffset.UnixEpoch, DateTimeOffset.UnixEpoch, error, error));
    }
}
