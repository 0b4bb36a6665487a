using System.Diagnostics;
using System.Net;
using System.Net.Http.Json;
using System.Text.Json;
using Indexing.Indexer;
using Indexing.Storage;

namespace Indexing.Server.Tests;

// The store's volume fills under the server: writes answer 507 with the cause and what to do, reads,
// queries and the index following the change feed go on, /admin/store shows the refusal, and once
// the volume has room again writes succeed without a restart, every acknowledged one still there.
public sealed class StoreFullTests
{
    private const long VolumeBytes = 4L << 20;

    private const string Definition = """
        {"name": "notes-by-kind", "collection": "notes", "fields": [{"name": "kind", "path": "kind", "type": "keyword"}]}
        """;

    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Put_StoreVolumeFull_Answers507_ReadsAndQueriesGoOn_AndWritesResumeWithoutRestart()
    {
        // The store alone on a small volume; the indexes stay on the data directory's own disk.
        using var data = new TempDirectory("indexing-server-tests");
        using var volume = TmpfsVolume.MountAt(Path.Combine(data.Path, "store"), VolumeBytes);
        await using var server = await RunningServer.StartAsync(directory: data.Path);
        await server.DefineIndexAsync(Definition, documents: 0);

        var note = $$"""{"kind": "note", "text": "{{new string('x', 16 << 10)}}"}""";
        var acknowledged = new List<string>();
        HttpResponseMessage? full = null;
        for (var i = 0; i < 1000 && full is null; i++)
        {
            var id = $"notes/{i:D4}";
            var response = await server.Client.PutAsync($"/docs/{id}", RunningServer.Json(note));
            if (response.StatusCode == HttpStatusCode.InsufficientStorage)
            {
                full = response;
                break;
            }

            Assert.True(response.StatusCode == HttpStatusCode.Created, $"PUT {id}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
            acknowledged.Add(id);
            response.Dispose();
        }

        Assert.True(full is not null, $"{acknowledged.Count} writes of 16 KiB never filled a 4 MiB volume.");
        Assert.True(acknowledged.Count > 10, $"only {acknowledged.Count} writes before the volume was full.");
        var problem = await ReadProblemAsync(full);
        full.Dispose();
        Assert.Equal("Store volume full", problem.GetProperty("title").GetString());
        var detail = problem.GetProperty("detail").GetString()!;
        Assert.Contains("the store's volume is full", detail, StringComparison.Ordinal);
        Assert.True(detail.Contains("'<data>/store'", StringComparison.Ordinal), detail);
        Assert.Contains("64 MiB free again", detail, StringComparison.Ordinal);
        Assert.Contains("resumes writes by itself", detail, StringComparison.Ordinal);
        Assert.DoesNotContain(data.Path, detail, StringComparison.Ordinal);

        // Every write is refused: a delete, a bulk load.
        using (var delete = await server.Client.DeleteAsync($"/docs/{acknowledged[0]}"))
        {
            Assert.Equal(HttpStatusCode.InsufficientStorage, delete.StatusCode);
        }

        using (var bulk = await server.Client.PostAsync("/docs/bulk", new StringContent("""{"id": "notes/bulk", "doc": {"kind": "note"}}""" + "\n", null, "application/x-ndjson")))
        {
            Assert.Equal(HttpStatusCode.InsufficientStorage, bulk.StatusCode);
            Assert.Contains("the documents before it are stored", (await ReadProblemAsync(bulk)).GetProperty("detail").GetString(), StringComparison.Ordinal);
        }

        // The status says so.
        var writes = await server.GetJsonAsync("/admin/store");
        Assert.False(writes.GetProperty("writesAccepted").GetBoolean());
        Assert.True(writes.GetProperty("volumeFull").GetBoolean());
        Assert.Equal(JsonValueKind.String, writes.GetProperty("writesRefusedSince").ValueKind);
        Assert.Contains("No space left on device", writes.GetProperty("writeError").GetString(), StringComparison.Ordinal);

        // Reads go on, and so does the index: it follows the change feed up to the last acknowledged write.
        await AssertAllReadableAsync(server, acknowledged);
        await WaitForHitsAsync(server, acknowledged.Count, atMost: acknowledged.Count);
        var index = server.Host.Engine.Indexes.GetSummary("notes-by-kind").Status;
        Assert.NotEqual(IndexState.Error, index.State);
        Assert.Null(index.LastError);

        // Room again: RocksDB resumes by itself (it checks every 5 s), no restart.
        volume.Resize(VolumeBytes + DocumentStore.ResumeFreeBytes + (16L << 20));
        var waited = Stopwatch.StartNew();
        while (true)
        {
            using var response = await server.Client.PutAsync("/docs/notes/after", RunningServer.Json(note));
            if (response.StatusCode == HttpStatusCode.Created)
            {
                break;
            }

            Assert.True(response.StatusCode == HttpStatusCode.InsufficientStorage, $"PUT while resuming: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
            Assert.True(waited.Elapsed < _hangGuard, $"writes did not resume within {_hangGuard.TotalSeconds} s of the volume growing.");
            await Task.Delay(100);
        }

        acknowledged.Add("notes/after");
        Assert.True((await server.GetJsonAsync("/admin/store")).GetProperty("writesAccepted").GetBoolean());
        using (var delete = await server.Client.DeleteAsync($"/docs/{acknowledged[0]}"))
        {
            Assert.Equal(HttpStatusCode.OK, delete.StatusCode);
        }

        acknowledged.RemoveAt(0);
        await AssertAllReadableAsync(server, acknowledged);
        await WaitForHitsAsync(server, acknowledged.Count, atMost: acknowledged.Count + 1);
    }

    private static async Task<JsonElement> ReadProblemAsync(HttpResponseMessage response)
    {
        Assert.Equal("application/problem+json", response.Content.Headers.ContentType?.MediaType);
        return await response.Content.ReadFromJsonAsync<JsonElement>();
    }

    private static async Task AssertAllReadableAsync(RunningServer server, List<string> ids)
    {
        foreach (var id in ids)
        {
            using var response = await server.Client.GetAsync($"/docs/{id}");
            Assert.True(response.StatusCode == HttpStatusCode.OK, $"GET {id} (acknowledged): {(int)response.StatusCode}");
        }
    }

    // Waits until the index has `hits` hits; on the way it may have at most `atMost` (more would be a refused write, or a delete applied twice).
    private static async Task WaitForHitsAsync(RunningServer server, int hits, int atMost)
    {
        using var timeout = new CancellationTokenSource(_hangGuard);
        long total;
        while ((total = (await server.GetJsonAsync("/indexes/notes-by-kind/query?q=kind:note&take=1")).GetProperty("totalHits").GetInt64()) != hits)
        {
            Assert.True(total <= atMost, $"the index has {total} hits, more than the {atMost} documents the store may hold now.");
            await Task.Delay(50, timeout.Token);
        }
    }
}
