using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace Indexing.Server.Hosting;

/// <summary>
/// The server's settings as the configuration gives them, text not yet judged: the sections
/// <c>Server</c>, <c>Storage</c> and <c>Indexes</c> and ASP.NET Core's root key <c>AllowedHosts</c>, bound by the
/// configuration binder. <see cref="ServerSettingsValidator"/> holds every rule; <see cref="ServerOptions"/>
/// is what valid settings mean. Text rather than typed properties, because the rules accept what
/// the binder does not ("64MiB", "10s") and a refusal quotes what the operator wrote.
/// </summary>
internal sealed class ServerSettings
{
    public ServerSection Server { get; set; } = new();

    public StorageSection Storage { get; set; } = new();

    public IndexesSection Indexes { get; set; } = new();

    /// <summary>
    /// Section <c>Rebuilds</c>, no longer read: its settings moved to section <c>Indexes</c>. Bound only
    /// so that a configuration still setting them is refused by name instead of silently ignored.
    /// </summary>
    public Dictionary<string, string?> Rebuilds { get; set; } = new(StringComparer.OrdinalIgnoreCase);

    /// <summary><see cref="ServerOptions.AllowedHostsSetting"/>, semicolon-separated.</summary>
    public string? AllowedHosts { get; set; }

    /// <summary>Binds the settings from the merged configuration (appsettings.json, environment, command line).</summary>
    public static ServerSettings From(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var settings = new ServerSettings();
        configuration.Bind(settings);
        return settings;
    }

    /// <summary>Section <c>Server</c>.</summary>
    internal sealed class ServerSection
    {
        public string? Address { get; set; }

        public string? Port { get; set; }

        public string? ApiKey { get; set; }

        public string? ReadApiKey { get; set; }

        public string? QueryTimeout { get; set; }

        public string? MaxConcurrentQueries { get; set; }

        public string? QueryQueueLength { get; set; }

        public string? MaxQueryTerms { get; set; }

        public string? MaxSortKeys { get; set; }

        public string? MaxEventStreams { get; set; }

        public string? MaxConnections { get; set; }

        public string? MinResponseBytesPerSecond { get; set; }
    }

    /// <summary>Section <c>Storage</c>: the <see cref="Indexing.Storage.StoreOptions"/> the server opens its store with.</summary>
    internal sealed class StorageSection
    {
        public string? MaxDocumentBytes { get; set; }

        public string? SyncWrites { get; set; }

        public string? BlockCacheBytes { get; set; }

        public string? DirectReads { get; set; }

        public string? RowCacheBytes { get; set; }

        public string? NativeLibrary { get; set; }
    }

    /// <summary>Section <c>Indexes</c>: what every index is opened with (<see cref="Indexer.IndexOptions"/>).</summary>
    internal sealed class IndexesSection
    {
        public string? IndexingThreads { get; set; }

        public string? IndexingThreadNice { get; set; }

        public string? BulkCommitInterval { get; set; }

        public string? BulkCommitShare { get; set; }

        public string? SwapLagEtags { get; set; }

        public string? DrainTimeout { get; set; }

        public string? MaxConcurrentRebuilds { get; set; }

        public string? SharedPassWindow { get; set; }

        public string? PrefetchBudgetBytes { get; set; }
    }
}

/// <summary>
/// Every rule of the server's settings, each refusal naming its setting, its value and what to
/// do; all problems at once. The one place server settings are judged: <see cref="ServerOptions.Bind"/>
/// runs it before anything opens, and the host runs it again at start (ValidateOnStart).
/// </summary>
internal sealed class ServerSettingsValidator : IValidateOptions<ServerSettings>
{
    public ValidateOptionsResult Validate(string? name, ServerSettings options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new List<string>();
        ServerOptions.Read(options, ".", problems);
        return problems.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(problems);
    }
}
