using System.Net.Http.Json;
using System.Text.Json;
using Indexing.Server.Tests;

namespace Indexing.Cluster.Tests;

/// <summary>
/// Nodes of one cluster as real processes (`indexing serve --cluster ... --node nX`), each over its own
/// data directory, with settings short enough for tests: a 3 s lease, 100 ms polls, a 2 s retire grace,
/// 1 MiB documents at most.
/// A node can be killed (SIGKILL) and started again over the same data.
/// </summary>
internal sealed class ClusterNodes : IAsyncDisposable
{
    public static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(90);

    private readonly TempDirectory _root = new("cluster-nodes");
    private readonly Dictionary<string, IndexingProcess> _processes = new(StringComparer.Ordinal);
    private readonly Dictionary<string, Uri> _urls = new(StringComparer.Ordinal);
    private readonly Dictionary<string, string> _etcdOverride = new(StringComparer.Ordinal);

    public ClusterNodes(string endpoints, params string[] nodes)
    {
        Endpoints = endpoints;
        Nodes = nodes;
        Http = new HttpClient { Timeout = TimeSpan.FromSeconds(60) };
    }

    public string Endpoints { get; }

    public IReadOnlyList<string> Nodes { get; }

    public HttpClient Http { get; }

    /// <summary>Writes the shard map (`indexing cluster init`) and starts every node.</summary>
    public static async Task<ClusterNodes> StartAsync(string endpoints, int buckets, params string[] nodes)
    {
        var cluster = new ClusterNodes(endpoints, nodes);
        try
        {
            await cluster.InitializeAndStartAsync(buckets);
            return cluster;
        }
        catch
        {
            await cluster.DisposeAsync();
            throw;
        }
    }

    /// <summary>Writes the shard map (`indexing cluster init`) and starts every node (after <see cref="ReachEtcdThrough"/>, say).</summary>
    public async Task InitializeAndStartAsync(int buckets)
    {
        using (var init = IndexingProcess.Start("cluster", null, new Dictionary<string, string>(), ["init", "--cluster", Endpoints, "--nodes", string.Join(',', Nodes), "--buckets", buckets.ToString(System.Globalization.CultureInfo.InvariantCulture)]))
        {
            Assert.True(await init.WaitForExitAsync(StartTimeout) == 0, init.Output);
        }

        await Task.WhenAll(Nodes.Select(StartNodeAsync));
    }

    /// <summary>The node's base URL (its latest start).</summary>
    public Uri Url(string node) => _urls[node];

    /// <summary>Makes <paramref name="node"/> reach etcd through <paramref name="endpoints"/> from its next start (a relay the test can cut).</summary>
    public void ReachEtcdThrough(string node, string endpoints) => _etcdOverride[node] = endpoints;

    public async Task StartNodeAsync(string node)
    {
        var process = Launch(node, Path.Combine(_root.Path, node));
        lock (_processes)
        {
            _processes[node] = process;
        }

        _urls[node] = await process.WaitForAddressAsync(StartTimeout);
    }

    /// <summary>A second process with <paramref name="node"/>'s id, over data of its own (the caller waits for it and disposes it).</summary>
    public IndexingProcess StartImpostor(string node) => Launch(node, Path.Combine(_root.Path, node + "-impostor"));

    private IndexingProcess Launch(string node, string data) =>
        IndexingProcess.Start(
            "serve",
            data,
            new Dictionary<string, string>
            {
                ["Cluster__LeaseTtl"] = "00:00:03",
                ["Cluster__PollInterval"] = "00:00:00.100",
                ["Cluster__RetireGrace"] = "00:00:02",
                ["Cluster__EtcdTimeout"] = "00:00:01",
                ["Storage__MaxDocumentBytes"] = "1MiB",
                ["Logging__LogLevel__indexing"] = "Information",
            },
            "--port", "0", "--cluster", _etcdOverride.GetValueOrDefault(node, Endpoints), "--node", node);

    /// <summary>SIGKILL: no shutdown, no lease revoked (etcd expires it after its TTL).</summary>
    public void Kill(string node)
    {
        IndexingProcess process;
        lock (_processes)
        {
            process = _processes[node];
            _processes.Remove(node);
        }

        process.Kill();
        process.Dispose();
    }

    public string Output(string node)
    {
        lock (_processes)
        {
            return _processes.TryGetValue(node, out var process) ? process.Output : string.Empty;
        }
    }

    /// <summary>GET a JSON answer from <paramref name="node"/>; fails on an error status with its body.</summary>
    public async Task<JsonElement> GetJsonAsync(string node, string path)
    {
        using var response = await Http.GetAsync(new Uri(Url(node), path));
        var body = await response.Content.ReadAsStringAsync();
        Assert.True(response.IsSuccessStatusCode, $"GET {path} on {node}: {(int)response.StatusCode} {body}");
        return JsonDocument.Parse(body).RootElement.Clone();
    }

    /// <summary>Waits until <paramref name="condition"/> holds, polling every 100 ms; fails with <paramref name="what"/> after <paramref name="timeout"/>.</summary>
    public static async Task WaitUntilAsync(Func<Task<bool>> condition, TimeSpan timeout, Func<string> what)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!await condition())
        {
            Assert.True(clock.Elapsed < timeout, $"not within {timeout}: {what()}");
            await Task.Delay(100);
        }
    }

    public async ValueTask DisposeAsync()
    {
        Http.Dispose();
        List<IndexingProcess> running;
        lock (_processes)
        {
            running = [.. _processes.Values];
            _processes.Clear();
        }

        foreach (var process in running)
        {
            process.Dispose();
        }

        _root.Dispose();
        await Task.CompletedTask;
    }
}
