using System.Collections.Concurrent;
using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using Xunit.Abstractions;

namespace Indexing.Server.Tests;

/// <summary>
/// The built executable killed with SIGKILL while a rebuild runs and two clients write: after a
/// restart, every write the server acknowledged is there as acknowledged, no etag was issued twice,
/// and the index verifies clean once the resumed rebuild is done.
/// </summary>
[Trait("Category", "Crash")]
public sealed class ServeCrashTests(ITestOutputHelper log) : IDisposable
{
    private const string Index = "orders-text";
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(90);
    private static readonly string[] _words = ["amber", "basalt", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper", "krypton", "lagoon"];
    private readonly TempDirectory _directory = new("indexing-serve-crash-tests");

    [Fact]
    public async Task Serve_KilledDuringARebuildWhileTwoClientsWrite_KeepsEveryAcknowledgedWrite()
    {
        var ledgers = new[] { new WriteLedger(), new WriteLedger() };
        string phaseAtKill;
        using (var server = IndexingProcess.Start("serve", _directory.Path, "--port", "0"))
        {
            using var client = new HttpClient { BaseAddress = await server.WaitForAddressAsync(_hangGuard), Timeout = _hangGuard };
            await LoadAsync(client, 4000);
            await DefineAsync(client);
            await WaitUntilRebuildEndedAsync(client);

            using var stop = new CancellationTokenSource();
            var writers = ledgers.Select((ledger, w) => Task.Run(() => WriteAsync(client, w, ledger, stop.Token))).ToArray();
            phaseAtKill = await KillDuringARebuildAsync(client, server, ledgers);
            await stop.CancelAsync();
            await Task.WhenAll(writers).WaitAsync(_hangGuard);
        }

        using var restarted = IndexingProcess.Start("serve", _directory.Path, "--port", "0");
        using var again = new HttpClient { BaseAddress = await restarted.WaitForAddressAsync(_hangGuard), Timeout = _hangGuard };
        var etags = new List<long>();
        foreach (var ledger in ledgers)
        {
            etags.AddRange(ledger.AcknowledgedEtags);
            foreach (var (id, entry) in ledger.Entries)
            {
                using var response = await again.GetAsync($"/docs/{id}");
                var body = response.StatusCode == HttpStatusCode.OK ? await response.Content.ReadAsStringAsync() : null;
                var etag = response.Headers.ETag is { } header ? long.Parse(header.Tag.Trim('"'), CultureInfo.InvariantCulture) : 0;
                Assert.True(entry.Admits(body, etag), $"{id} (killed in phase {phaseAtKill}): the store has {body ?? "nothing"} at etag {etag}; {entry}");
            }
        }

        Assert.True(etags.Count > 100, $"only {etags.Count} writes were acknowledged before the kill");
        log.WriteLine($"killed in rebuild phase {phaseAtKill} after {etags.Count} acknowledged writes; {ledgers.Sum(l => l.Entries.Count(e => e.Value.InFlight is not null))} in flight");
        Assert.Equal(etags.Count, etags.Distinct().Count());
        using (var put = await again.PutAsync("/docs/orders/after-restart", RunningServer.Json("""{"n": -1}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
            Assert.True(long.Parse(put.Headers.ETag!.Tag.Trim('"'), CultureInfo.InvariantCulture) > etags.Max(), "an etag was issued again after the restart");
        }

        await WaitUntilRebuildEndedAsync(again);
        using (var verify = await again.PostAsync($"/indexes/{Index}/verify", content: null))
        {
            var report = await verify.Content.ReadAsStringAsync();
            Assert.Equal(HttpStatusCode.OK, verify.StatusCode);
            Assert.Contains("\"isConsistent\":true", report, StringComparison.Ordinal);
        }

        restarted.Terminate();
        Assert.Equal(0, await restarted.WaitForExitAsync(_hangGuard));
    }

    public void Dispose() => _directory.Dispose();

    // Starts rebuilds until one is caught running (bulk, catch-up or swap) after at least 100 more
    // acknowledged writes, then kills the server; returns the phase it was in.
    private static async Task<string> KillDuringARebuildAsync(HttpClient client, IndexingProcess server, WriteLedger[] ledgers)
    {
        using var timeout = new CancellationTokenSource(_hangGuard);
        while (true)
        {
            using (var rebuild = await client.PostAsync($"/indexes/{Index}/rebuild", content: null, timeout.Token))
            {
                Assert.Equal(HttpStatusCode.Accepted, rebuild.StatusCode);
            }

            var target = ledgers.Sum(l => l.Acknowledged) + 100;
            while (true)
            {
                var phase = await RebuildPhaseAsync(client, timeout.Token);
                if (phase is null or "done" or "failed" or "cancelled")
                {
                    Assert.True(phase is null or "done", $"the rebuild ended {phase}");
                    break; // over before enough writes: start another
                }

                if (ledgers.Sum(l => l.Acknowledged) >= target)
                {
                    server.Kill();
                    return phase;
                }

                await Task.Delay(5, timeout.Token);
            }
        }
    }

    // One client: new documents, overwrites and deletes of its own ids, one at a time.
    private static async Task WriteAsync(HttpClient client, int writer, WriteLedger ledger, CancellationToken stop)
    {
        var random = new Random(writer);
        var next = 0;
        for (var version = 0; !stop.IsCancellationRequested; version++)
        {
            var roll = random.Next(10);
            var existing = ledger.LiveIds();
            HttpResponseMessage? response = null;
            if (roll < 3 && existing.Count > 0)
            {
                var id = existing[random.Next(existing.Count)];
                ledger.Begin(id, body: null);
                try
                {
                    response = await client.DeleteAsync($"/docs/{id}", CancellationToken.None);
                    ledger.End(id, response.StatusCode == HttpStatusCode.OK ? Etag(response) : null);
                }
                catch (HttpRequestException)
                {
                    return; // the server died with this delete in flight: its outcome stays unknown
                }
                finally
                {
                    response?.Dispose();
                }
            }
            else
            {
                var id = roll < 5 && existing.Count > 0 ? existing[random.Next(existing.Count)] : $"orders/w{writer}-{next++:D5}";
                var body = $$"""{"n":{{version}},"writer":{{writer}},"text":"{{Words(random, 40)}}"}""";
                ledger.Begin(id, body);
                try
                {
                    response = await client.PutAsync($"/docs/{id}", RunningServer.Json(body), CancellationToken.None);
                    ledger.End(id, response.StatusCode is HttpStatusCode.OK or HttpStatusCode.Created ? Etag(response) : null);
                }
                catch (HttpRequestException)
                {
                    return;
                }
                finally
                {
                    response?.Dispose();
                }
            }
        }
    }

    private static long Etag(HttpResponseMessage response) => long.Parse(response.Headers.ETag!.Tag.Trim('"'), CultureInfo.InvariantCulture);

    private static async Task LoadAsync(HttpClient client, int documents)
    {
        var random = new Random(7);
        var lines = new StringBuilder();
        for (var i = 0; i < documents; i++)
        {
            lines.Append($$$"""{"id": "orders/base-{{{i:D5}}}", "doc": {"n": {{{i}}}, "text": "{{{Words(random, 300)}}}"}}""").Append('\n');
        }

        using var response = await client.PostAsync("/docs/bulk", new StringContent(lines.ToString(), Encoding.UTF8, "application/x-ndjson"));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    private static async Task DefineAsync(HttpClient client)
    {
        using var put = await client.PutAsync($"/indexes/{Index}", RunningServer.Json(
            $$"""{"name": "{{Index}}", "collection": "orders", "fields": [{"name": "n", "path": "n", "type": "long"}, {"name": "text", "path": "text", "type": "text"}]}"""));
        Assert.Equal(HttpStatusCode.Created, put.StatusCode);
    }

    // The index's current rebuild ended (or none runs: a restart after the switch has nothing to resume).
    private static async Task WaitUntilRebuildEndedAsync(HttpClient client)
    {
        using var timeout = new CancellationTokenSource(_hangGuard);
        while (await RebuildPhaseAsync(client, timeout.Token) is not (null or "done"))
        {
            await Task.Delay(100, timeout.Token);
        }
    }

    private static async Task<string?> RebuildPhaseAsync(HttpClient client, CancellationToken cancellationToken)
    {
        using var summary = JsonDocument.Parse(await client.GetStringAsync($"/indexes/{Index}", cancellationToken));
        return summary.RootElement.TryGetProperty("rebuild", out var rebuild) && rebuild.ValueKind == JsonValueKind.Object
            ? rebuild.GetProperty("phase").GetString()
            : null;
    }

    private static string Words(Random random, int count) =>
        string.Join(' ', Enumerable.Range(0, count).Select(_ => _words[random.Next(_words.Length)]));

    // What one client knows about its own ids: the last acknowledged state of each, and the write
    // it had in flight when the server died (which may or may not have happened).
    private sealed class WriteLedger
    {
        private readonly ConcurrentDictionary<string, Entry> _entries = new(StringComparer.Ordinal);
        private readonly ConcurrentBag<long> _etags = [];
        private int _acknowledged;

        public int Acknowledged => Volatile.Read(ref _acknowledged);

        public IEnumerable<long> AcknowledgedEtags => _etags;

        public IEnumerable<KeyValuePair<string, Entry>> Entries => _entries;

        public List<string> LiveIds() => [.. _entries.Where(e => e.Value.Body is not null).Select(e => e.Key).Order(StringComparer.Ordinal)];

        public void Begin(string id, string? body) =>
            _entries.AddOrUpdate(id, _ => new Entry(null, 0, new Pending(body)), (_, current) => current with { InFlight = new Pending(body) });

        // etag null: the server answered, but not with success (nothing changed).
        public void End(string id, long? etag)
        {
            _entries.AddOrUpdate(
                id,
                _ => throw new InvalidOperationException("End without Begin"),
                (_, current) => etag is { } acknowledged
                    ? new Entry(current.InFlight!.Body, acknowledged, InFlight: null)
                    : current with { InFlight = null });
            if (etag is { } value)
            {
                _etags.Add(value);
                Interlocked.Increment(ref _acknowledged);
            }
        }

        // Body null: absent (never written, or deleted). Etag of a live document: the acknowledged one.
        public sealed record Entry(string? Body, long Etag, Pending? InFlight)
        {
            public bool Admits(string? body, long etag) =>
                (body == Body && (body is null || etag == Etag))
                || (InFlight is { } pending && body == pending.Body && (body is null || etag > Etag));

            public override string ToString() =>
                $"acknowledged {(Body is null ? "absent" : $"at etag {Etag}")}{(InFlight is null ? string.Empty : $", in flight: {(InFlight.Body is null ? "delete" : "put")}")}";
        }

        public sealed record Pending(string? Body);
    }
}
