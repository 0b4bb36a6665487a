using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Indexing.Datasets;
using Indexing.Engine;
using Indexing.Prefetcher;
using Indexing.Server.Hosting;
using Indexing.Storage;

namespace Indexing.Server.Tests;

/// <summary>
/// A real server for one test: Kestrel on 127.0.0.1 with a port the OS picked, a real RocksDB store
/// in its own temp directory, and an HttpClient pointed at it. Disposing stops the server
/// gracefully, closes the store and deletes the directory.
/// </summary>
internal sealed class RunningServer : IAsyncDisposable
{
    private readonly List<IAsyncDisposable> _prefetches = [];
    private readonly List<IDisposable> _registrations = [];

    private RunningServer(string directory, ServerHost host, HttpClient client)
    {
        Directory = directory;
        Host = host;
        Client = client;
    }

    public const long PrefetchBudgetBytes = 1L << 20;

    public string Directory { get; }

    public ServerHost Host { get; }

    public HttpClient Client { get; }

    public DocumentStore Store => Host.Engine.Store;

    /// <summary>
    /// Starts a server on a new temp data directory, or on <paramref name="directory"/> (e.g. one whose store is on a small volume);
    /// <paramref name="withHooks"/> sets the index manager's test hooks.
    /// </summary>
    public static async Task<RunningServer> StartAsync(
        IReadOnlyDictionary<string, string?>? settings = null, string? directory = null, Func<Indexer.IndexManagerOptions, Indexer.IndexManagerOptions>? withHooks = null)
    {
        directory ??= Path.Combine(Path.GetTempPath(), "indexing-server-tests", Guid.NewGuid().ToString("N"));
        var overrides = Defaults(settings);
        var host = await ServerHost.StartAsync(
            directory, [], overrides, options => IndexingEngine.Open(options, withHooks ?? (static manager => manager)), CancellationToken.None);
        var client = new HttpClient { BaseAddress = host.BaseAddress, Timeout = TimeSpan.FromSeconds(30) };
        return new RunningServer(directory, host, client);
    }

    /// <summary>Test defaults (no fsync, small cache, quiet logs), with <paramref name="settings"/> on top.</summary>
    public static Dictionary<string, string?> Defaults(IReadOnlyDictionary<string, string?>? settings = null)
    {
        var overrides = new Dictionary<string, string?>
        {
            [ServerOptions.PortSetting] = "0",
            [ServerOptions.SyncWritesSetting] = "false",
            [ServerOptions.BlockCacheBytesSetting] = "8MiB",
            ["Logging:LogLevel:Default"] = "Warning",
        };
        foreach (var (key, value) in settings ?? new Dictionary<string, string?>())
        {
            overrides[key] = value;
        }

        return overrides;
    }

    public static StringContent Json(string json) => new(json, Encoding.UTF8, "application/json");

    /// <summary>Writes a generated collection of about <paramref name="totalBytes"/> into the store; returns the document count.</summary>
    public long LoadOrders(long totalBytes, DatasetShape shape = DatasetShape.LogNormal)
    {
        var spec = new DatasetSpec(shape, targetTotalBytes: totalBytes, maxDocumentBytes: 256 << 10);
        return Store.PutMany(DatasetGenerator.Generate(spec).Select(d => new DocumentWrite(d.Id, d.Utf8Json))).Documents;
    }

    /// <summary>
    /// Starts an adaptive prefetch of "orders" with a 1 MiB budget, registers it as
    /// <paramref name="name"/>, and consumes it in the background at about 1 MB/s, like a slow indexer:
    /// with the small budget, reads keep going (and the pressure keeps changing) for as many seconds
    /// as the collection has MB. Stopped and unregistered when the server is disposed.
    /// </summary>
    public IBatchSource StartPrefetch(string name, long? maxBytesPerSecond = null)
    {
        var source = Prefetch.Start(Store, DatasetSpec.DefaultCollection, PrefetchStrategy.Adaptive,
            new PrefetchOptions { MaxBytesPerSecond = maxBytesPerSecond, BudgetBytes = PrefetchBudgetBytes });
        _prefetches.Add(source);
        _registrations.Add(Host.Engine.Prefetches.Register(name, source));
        _ = Task.Run(async () =>
        {
            try
            {
                while (await source.TakeAsync(64, 100_000) is not null)
                {
                    await Task.Delay(100);
                }
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
            {
                // The test ended first and disposed the prefetch.
            }
        });
        return source;
    }

    /// <summary>Defines an index straight through the manager and waits (up to 60 s) until its first build is done and it holds <paramref name="documents"/> documents.</summary>
    public async Task DefineIndexAsync(string definitionJson, long documents)
    {
        var definition = Indexer.IndexDefinition.Parse(definitionJson);
        Host.Engine.Indexes.CreateOrUpdate(definition);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        while (Host.Engine.Indexes.GetRebuild(definition.Name) is { IsFinished: false } || Host.Engine.Indexes.GetSummary(definition.Name).Status.DocumentCount < documents)
        {
            await Task.Delay(50, timeout.Token);
        }
    }

    public async Task<JsonElement> GetJsonAsync(string path)
    {
        using var response = await Client.GetAsync(path);
        Assert.True(response.IsSuccessStatusCode, $"GET {path}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        return await response.Content.ReadFromJsonAsync<JsonElement>();
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        foreach (var registration in _registrations)
        {
            registration.Dispose();
        }

        foreach (var prefetch in _prefetches)
        {
            await prefetch.DisposeAsync();
        }

        // A rebuild still running holds its snapshot legitimately: stop the indexes (idempotent; the
        // host disposes them again) before looking for leaked snapshots and iterators.
        await Host.Engine.Indexes.DisposeAsync();
        var status = Store.GetStatus();
        await Host.DisposeAsync();
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: a leftover temp directory must not fail the test that made it.
        }

        // After cleanup, so a failure here does not leak the server: every snapshot and scan was released.
        Assert.Equal(0, status.OpenSnapshots);
        Assert.Equal(0, status.OpenIterators);
    }
}
