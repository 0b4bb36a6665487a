using System.Text.Json.Serialization;
using Indexing.Cluster;
using Indexing.Engine;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Server.Admin;
using Indexing.Server.Cluster;
using Indexing.Server.Http;
using Indexing.Storage;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Configuration.Memory;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Indexing.Server.Hosting;

/// <summary>
/// A running server: Kestrel with the document and admin endpoints over one open
/// <see cref="DocumentStore"/>. `serve` and the tests start it the same way.
/// <para>
/// Owns the store, the index manager, the metrics meter and the web application. Disposal is the graceful shutdown:
/// stop accepting, let requests in progress finish (bounded by the host's shutdown timeout), end
/// SSE streams, and only then close the store, so every acknowledged write is in RocksDB.
/// </para>
/// <para>
/// Files: this one (start, stop); <c>.Pipeline.cs</c> (Kestrel limits, services and middleware: what
/// guards the endpoints).
/// </para>
/// </summary>
internal sealed partial class ServerHost : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly PrefetchMetrics _metrics;
    private readonly ClusterHost? _cluster;
    private int _disposed;

    private ServerHost(WebApplication app, ServerOptions options, IndexingEngine engine, PrefetchMetrics metrics, RebuildBoard rebuilds, MemoryMonitor memory, ClusterHost? cluster)
    {
        _app = app;
        _cluster = cluster;
        Options = options;
        Engine = engine;
        _metrics = metrics;
        Rebuilds = rebuilds;
        Memory = memory;
    }

    public ServerOptions Options { get; }

    /// <summary>The engine over the data directory: the store, the indexes and their rebuilds' prefetches.</summary>
    public IndexingEngine Engine { get; }

    /// <summary>This node of its cluster (<c>serve --cluster</c>), or null for a single node.</summary>
    public ClusterNode? Cluster => _cluster?.Node;

    /// <summary>Where rebuilds report progress for the admin page.</summary>
    public RebuildBoard Rebuilds { get; }

    /// <summary>The process's memory, sampled every second, for the admin page and /metrics.</summary>
    public MemoryMonitor Memory { get; }

    /// <summary>The web application's services (logging, options): for tests and diagnostics.</summary>
    internal IServiceProvider Services => _app.Services;

    /// <summary>The address Kestrel listens on, e.g. http://127.0.0.1:5080 (the real port when 0 was asked for).</summary>
    public Uri BaseAddress { get; private set; } = null!;

    /// <summary>How long one node waits for another's answer (a forwarded write, a shard's page, a bulk chunk).</summary>
    public static readonly TimeSpan ShardCallTimeout = TimeSpan.FromSeconds(30);

    /// <summary>How long a stop waits for requests in progress before it aborts them.</summary>
    public static readonly TimeSpan ShutdownTimeout = TimeSpan.FromSeconds(30);

    /// <summary>
    /// Waits until <paramref name="cancellationToken"/> is cancelled (the command's token: Ctrl+C or
    /// SIGTERM, which only the command handles); returns then, without throwing. Disposing the host
    /// afterwards is the graceful stop.
    /// </summary>
    public static async Task WaitUntilStoppedAsync(CancellationToken cancellationToken) =>
        await Task.Delay(Timeout.Infinite, cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);

    /// <summary>
    /// Reads the configuration (appsettings.json, environment, <paramref name="args"/> as ASP.NET Core
    /// command-line configuration, then <paramref name="overrides"/>), validates it, opens the store in
    /// <c>&lt;dataDirectory&gt;/store</c> and starts listening. Throws <see cref="ServerConfigurationException"/>
    /// for invalid settings and <see cref="DocumentStoreException"/> when the store cannot be opened.
    /// </summary>
    public static Task<ServerHost> StartAsync(
        string dataDirectory, string[] args, IReadOnlyDictionary<string, string?> overrides, CancellationToken cancellationToken) =>
        StartAsync(dataDirectory, args, overrides, IndexingEngine.Open, cancellationToken);

    // Test seam: openEngine opens the engine over the bound options; tests open it with the index
    // manager's test hooks (e.g. to hold a rebuild at a point), the server itself with IndexingEngine.Open.
    internal static async Task<ServerHost> StartAsync(
        string dataDirectory, string[] args, IReadOnlyDictionary<string, string?> overrides, Func<EngineOptions, IndexingEngine> openEngine, CancellationToken cancellationToken)
    {
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = args });
        builder.Configuration.Sources.Insert(0, new MemoryConfigurationSource { InitialData = QuietDefaults });
        builder.Configuration.AddInMemoryCollection(overrides);
        // The settings are judged here, before anything opens (a refused start creates no store), and
        // shape the services (Kestrel's address, authentication when a key is set); the host judges
        // them again at start by the same validator, for whatever reads them through IOptions.
        var options = ServerOptions.Bind(builder.Configuration, dataDirectory);
        builder.Services.AddSingleton<IValidateOptions<ServerSettings>, ServerSettingsValidator>();
        builder.Services.AddOptions<ServerSettings>().Bind(builder.Configuration).ValidateOnStart();
        ConfigureServices(builder, options);

        var clusterOptions = ClusterSettings.Read(builder.Configuration);
        var engine = openEngine(options.Engine);
        var rebuilds = new RebuildBoard();
        ClusterHost? cluster = null;
        MemoryMonitor? memory = null;
        PrefetchMetrics? metrics = null;
        WebApplication? app = null;
        try
        {
            rebuilds.RegisterMany(() => RebuildBars(engine));
            memory = new MemoryMonitor(engine);
            metrics = new PrefetchMetrics(engine, memory);
            app = builder.Build();
            var gate = ConfigurePipeline(app, options);
            var failures = new FailureTexts(options.DataDirectory);
            if (clusterOptions is null)
            {
                DocumentEndpoints.Map(app, engine, failures);
                IndexEndpoints.Map(app, engine, options.Limits, failures);
            }
            else
            {
                // The routes are in place before the node joins (it needs its own address, known once
                // listening); until then they answer 503.
                cluster = new ClusterHost(new ShardClient(options.ApiKey, ShardCallTimeout));
                ClusterEndpoints.Map(app, cluster, engine, options.Limits, failures);
            }

            AdminEndpoints.Map(app, engine, rebuilds, metrics, memory, options.ApiKey is null ? null : gate);
            StoreEndpoints.Map(app, engine, failures);

            var host = new ServerHost(app, options, engine, metrics, rebuilds, memory, cluster);
            await app.StartAsync(cancellationToken).ConfigureAwait(false);
            var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses;
            host.BaseAddress = new Uri(addresses.First());
            if (cluster is not null)
            {
                var advertised = ClusterSettings.AdvertisedUrl(builder.Configuration, host.BaseAddress);
                cluster.Node = await ClusterNode.JoinAsync(clusterOptions!, engine, advertised, app.Logger, cancellationToken).ConfigureAwait(false);
            }

            app.Logger.LogInformation("listening on {Address} (admin page {Address}admin); {Options}", host.BaseAddress, host.BaseAddress, options);
            LogIndexingPriority(app.Logger, options.Indexes);
            return host;
        }
        catch
        {
            if (cluster is not null)
            {
                await cluster.DisposeAsync().ConfigureAwait(false);
            }

            if (app is not null)
            {
                await app.DisposeAsync().ConfigureAwait(false);
            }

            metrics?.Dispose();
            if (memory is not null)
            {
                await memory.DisposeAsync().ConfigureAwait(false);
            }

            await engine.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    // The one line saying that indexing threads cannot be lowered here (they then compete with requests as equals).
    private static void LogIndexingPriority(ILogger logger, IndexOptions indexes)
    {
        if (indexes.IndexingThreadNice > 0 && IndexingEngine.IndexingThreadNiceUnsupportedReason is { } reason)
        {
            logger.LogWarning("{Setting} is {Nice}, but {Reason}", ServerOptions.IndexingThreadNiceSetting, indexes.IndexingThreadNice, reason);
        }
    }

    // The queued, running and just finished rebuilds of every index, as the admin page's bars.
    private static IEnumerable<RebuildBar> RebuildBars(IndexingEngine engine)
    {
        IReadOnlyList<IndexSummary> indexes;
        try
        {
            indexes = engine.ListIndexes();
        }
        catch (ObjectDisposedException)
        {
            yield break;
        }

        foreach (var index in indexes)
        {
            var name = index.Name;
            RebuildProgress? progress;
            try
            {
                progress = engine.GetRebuild(name);
            }
            catch (Exception e) when (e is IndexException { Kind: IndexingErrorKind.IndexNotFound } or ObjectDisposedException)
            {
                continue;
            }

            if (progress is not null)
            {
                yield return new RebuildBar(
                    name,
                    progress.Phase,
                    progress.DocumentsDone,
                    progress.DocumentsTotal > 0 ? progress.DocumentsTotal : null,
                    progress.Eta,
                    progress.ResumedAfter,
                    progress.DocumentsSkipped,
                    progress.Phase == RebuildPhase.Bulk ? progress.BulkCommitInterval : null,
                    progress.QueuePosition);
            }
        }
    }

    /// <summary>Stops gracefully (see the type's remarks), then closes the store. Idempotent.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            // Leaves the cluster first (its lease revoked: the other nodes see it down at once), then stops
            // serving, letting requests in progress finish (forwards and shard calls among them), and
            // only then drops the client those use.
            if (_cluster?.Node is { } node)
            {
                await node.DisposeAsync().ConfigureAwait(false);
            }

            await _app.StopAsync(CancellationToken.None).ConfigureAwait(false);
            await _app.DisposeAsync().ConfigureAwait(false);
            _cluster?.Shards.Dispose();
        }
        finally
        {
            // The memory sampler first (it reads the store and the indexes), then the engine.
            try
            {
                await Memory.DisposeAsync().ConfigureAwait(false);
            }
            finally
            {
                _metrics.Dispose();
                await Engine.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    /// <summary>A host lifetime that leaves process signals alone: see <see cref="StartAsync"/>.</summary>
    private sealed class CommandOwnedLifetime : IHostLifetime
    {
        public Task WaitForStartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
