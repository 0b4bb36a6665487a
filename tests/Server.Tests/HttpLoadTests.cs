using System.Diagnostics;
using System.Text;
using System.Text.Json;
using Indexing.Indexer;
using Indexing.Server.Hosting;
using Indexing.Storage;

namespace Indexing.Server.Tests;

/// <summary>
/// A short run of the HTTP load test (benchmarks/http-load: Debian's wrk with mix.lua) against a
/// live server while a side-by-side rebuild runs: GETs, PUTs and queries at as many connections as
/// the server takes, with a small query limit so that some queries are refused. It asserts only what
/// cannot flake on a loaded machine: no errors but the intended 429s, and the rebuild finishes.
/// Latency and memory are measured by the full run (benchmarks/http-load/run.sh), written down in
/// benchmarks/results/README.md, "HTTP load".
/// </summary>
[Trait("Category", "Load")]
public sealed class HttpLoadTests
{
    private const int Documents = 30_000;
    private static readonly TimeSpan _hangGuard = TimeSpan.FromMinutes(3);

    [Fact]
    public async Task MixedLoadDuringARebuild_NoErrorsButTheIntended429sAndTheRebuildFinishes()
    {
        using var timeout = new CancellationTokenSource(_hangGuard);
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.MaxConcurrentQueriesSetting] = "2",
            [ServerOptions.QueryQueueLengthSetting] = "2",
        });
        string[] statuses = ["new", "paid", "shipped", "cancelled"];
        var pad = new string('p', 600);
        server.Store.PutMany(Enumerable.Range(1, Documents).Select(i => new DocumentWrite(
            $"orders/{i:D8}",
            Encoding.UTF8.GetBytes($$"""{"customer": {"name": "{{(i % 7 == 0 ? "alice" : "bob")}} {{i % 500}}"}, "status": "{{statuses[i % 4]}}", "total": {{i % 9000}}, "pad": "{{pad}}"}"""))));
        await server.DefineIndexAsync(Definition, Documents);

        // A changed definition: the rebuild reads the whole collection while the load runs.
        Assert.Equal(IndexPutResult.RebuildStarted, server.Host.Engine.Indexes.CreateOrUpdate(IndexDefinition.Parse(ChangedDefinition)));
        var result = await RunWrkAsync(server.Host.BaseAddress, "mixed", TimeSpan.FromSeconds(8), timeout.Token);

        var errors = result.GetProperty("errors");
        foreach (var kind in new[] { "connect", "read", "write", "timeout" })
        {
            Assert.True(errors.GetProperty(kind).GetInt64() == 0, $"{kind} errors: {result}");
        }

        var counts = result.GetProperty("statuses").EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetInt64());
        Assert.True(counts.Keys.All(s => s is "200" or "201" or "429"), $"statuses other than 200, 201 and 429: {result}");
        Assert.True(counts.GetValueOrDefault("200") > 0 && counts.GetValueOrDefault("201") > 0, result.ToString());
        Assert.Equal(result.GetProperty("requests").GetInt64(), counts.Values.Sum());

        RebuildProgress? rebuild;
        while ((rebuild = server.Host.Engine.Indexes.GetRebuild("orders")) is { IsFinished: false })
        {
            await Task.Delay(200, timeout.Token);
        }

        Assert.Equal(RebuildPhase.Done, rebuild?.Phase);
    }

    // The index the load test queries, and the changed definition its rebuild builds (one more field).
    private const string Definition = """
        {"name": "orders", "collection": "orders", "fields": [
          {"name": "customer", "path": "customer.name", "type": "text"},
          {"name": "status", "path": "status", "type": "keyword", "sortable": true},
          {"name": "total", "path": "total", "type": "double", "sortable": true}
        ]}
        """;

    private const string ChangedDefinition = """
        {"name": "orders", "collection": "orders", "fields": [
          {"name": "customer", "path": "customer.name", "type": "text"},
          {"name": "buyer", "path": "customer.name", "type": "keyword"},
          {"name": "status", "path": "status", "type": "keyword", "sortable": true},
          {"name": "total", "path": "total", "type": "double", "sortable": true}
        ]}
        """;

    private static async Task<JsonElement> RunWrkAsync(Uri server, string mix, TimeSpan duration, CancellationToken cancellationToken)
    {
        var start = new ProcessStartInfo("wrk")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var argument in new[]
        {
            "-t2", "-c32", $"-d{(int)duration.TotalSeconds}s", "--timeout", "30s",
            "-s", RepositoryFiles.Combine("benchmarks", "http-load", "mix.lua"), server.ToString(),
        })
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["LOAD_MIX"] = mix;
        start.Environment["LOAD_IDS"] = Documents.ToString(System.Globalization.CultureInfo.InvariantCulture);
        start.Environment["LOAD_INDEX"] = "orders";
        Process wrk;
        try
        {
            wrk = Process.Start(start)!;
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new InvalidOperationException("wrk is not installed; install it with `apt-get install -y wrk` (CI: .ci/run does).", e);
        }

        using (wrk)
        {
            var output = wrk.StandardOutput.ReadToEndAsync(cancellationToken);
            var error = wrk.StandardError.ReadToEndAsync(cancellationToken);
            try
            {
                await wrk.WaitForExitAsync(cancellationToken);
            }
            finally
            {
                if (!wrk.HasExited)
                {
                    wrk.Kill();
                }
            }

            var text = await output;
            var line = text.Split('\n').SingleOrDefault(l => l.StartsWith("LOAD-RESULT ", StringComparison.Ordinal));
            Assert.True(wrk.ExitCode == 0 && line is not null, $"wrk exited with {wrk.ExitCode}:\n{text}\n{await error}");
            return JsonDocument.Parse(line!["LOAD-RESULT ".Length..]).RootElement.Clone();
        }
    }
}
