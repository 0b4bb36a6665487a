using System.Globalization;
using System.Net;
using System.Numerics;
using Indexing.Engine;
using Indexing.Storage;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Options;

namespace Indexing.Server.Hosting;

/// <summary>
/// What the server's settings (sections <c>Server</c>, <c>Storage</c> and <c>Indexes</c>) mean, read once at start
/// from the merged configuration (appsettings.json, environment variables such as <c>Server__Port</c>,
/// the command line) as <see cref="ServerSettings"/> and judged by <see cref="ServerSettingsValidator"/>:
/// every problem is reported at once, each naming its setting. Nothing here changes while the server
/// runs; live prefetch limits go through the admin API.
/// </summary>
internal sealed class ServerOptions
{
    public const int DefaultPort = 5080;
    public const string AddressSetting = "Server:Address";
    public const string PortSetting = "Server:Port";
    public const string ApiKeySetting = "Server:ApiKey";
    public const string ReadApiKeySetting = "Server:ReadApiKey";
    public const string MaxDocumentBytesSetting = StoreOptions.MaxDocumentBytesName;
    public const string SyncWritesSetting = "Storage:SyncWrites";
    public const string BlockCacheBytesSetting = StoreOptions.BlockCacheBytesName;
    public const string DirectReadsSetting = "Storage:DirectReads";
    public const string RowCacheBytesSetting = StoreOptions.RowCacheBytesName;
    public const string NativeLibrarySetting = StoreOptions.NativeLibraryName;
    public const string QueryTimeoutSetting = "Server:QueryTimeout";
    public const string MaxConcurrentQueriesSetting = "Server:MaxConcurrentQueries";
    public const string QueryQueueLengthSetting = "Server:QueryQueueLength";
    public const string MaxQueryTermsSetting = "Server:MaxQueryTerms";
    public const string MaxSortKeysSetting = "Server:MaxSortKeys";
    public const string MaxEventStreamsSetting = "Server:MaxEventStreams";
    public const string MaxConnectionsSetting = "Server:MaxConnections";
    public const string MinResponseBytesPerSecondSetting = "Server:MinResponseBytesPerSecond";
    public const string IndexingThreadsSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.IndexingThreads);
    public const string IndexingThreadNiceSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.IndexingThreadNice);
    public const string BulkCommitIntervalSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.BulkCommitInterval);
    public const string BulkCommitShareSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.BulkCommitShare);
    public const string SwapLagEtagsSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.SwapLagEtags);
    public const string DrainTimeoutSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.DrainTimeout);
    public const string MaxConcurrentRebuildsSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.MaxConcurrentRebuilds);
    public const string SharedPassWindowSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.SharedPassWindow);
    public const string PrefetchBudgetBytesSetting = Indexer.IndexOptions.SettingsPrefix + nameof(Indexer.IndexOptions.PrefetchBudgetBytes);

    /// <summary>ASP.NET Core's own host filtering setting (<c>HostFilteringOptions.AllowedHosts</c>), semicolon-separated.</summary>
    public const string AllowedHostsSetting = "AllowedHosts";

    /// <summary>The names a loopback server answers to by default: a page reached through any other name (DNS rebinding) is refused.</summary>
    public static readonly IReadOnlyList<string> LoopbackHosts = ["localhost", "127.0.0.1", "[::1]"];

    private static readonly TimeSpan _minQueryTimeout = TimeSpan.FromMilliseconds(1);
    private static readonly TimeSpan _maxQueryTimeout = TimeSpan.FromMinutes(10);

    // Shorter keys are guessable; the key is compared in constant time, so its length is the only defence.
    public const int MinApiKeyLength = 16;

    private ServerOptions(
        IPAddress address, int port, string? apiKey, string? readApiKey, IReadOnlyList<string> allowedHosts, HttpLimits limits, EngineOptions engine)
    {
        Engine = engine;
        Address = address;
        Port = port;
        ApiKey = apiKey;
        ReadApiKey = readApiKey;
        AllowedHosts = allowedHosts;
        Limits = limits;
    }

    /// <summary>What the engine opens with: sections <c>Storage</c> and <c>Indexes</c>, and the data directory.</summary>
    public EngineOptions Engine { get; }

    /// <summary>The data directory; the store lives in <see cref="StoreDirectory"/>.</summary>
    public string DataDirectory => Engine.DataDirectory;

    public string StoreDirectory => Engine.StoreDirectory;

    /// <summary>The address Kestrel binds; loopback unless configured.</summary>
    public IPAddress Address { get; }

    /// <summary>TCP port; 0 asks the OS for a free one (tests).</summary>
    public int Port { get; }

    /// <summary>When set, every request but the admin sign-in needs a key (X-Api-Key or Authorization: Bearer): this one opens everything.</summary>
    public string? ApiKey { get; }

    /// <summary>Only with <see cref="ApiKey"/>: a second key that opens reads only (documents, queries, index and rebuild status); never failure texts.</summary>
    public string? ReadApiKey { get; }

    /// <summary>Host names (Host header) the server answers; "*" for any. Loopback names by default on a loopback address.</summary>
    public IReadOnlyList<string> AllowedHosts { get; }

    public HttpLimits Limits { get; }

    public StoreOptions Store => Engine.Storage;

    /// <summary>The options every index is opened with (indexing threads and their nice value, the bulk commit cadence; the rest are the defaults).</summary>
    public Indexer.IndexOptions Indexes => Engine.Indexes;

    /// <summary>Binds and validates the settings; throws <see cref="ServerConfigurationException"/> listing every problem.</summary>
    public static ServerOptions Bind(IConfiguration configuration, string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        ArgumentException.ThrowIfNullOrWhiteSpace(dataDirectory);
        var settings = ServerSettings.From(configuration);
        var validation = new ServerSettingsValidator().Validate(name: null, settings);
        if (validation.Failed)
        {
            throw new ServerConfigurationException(validation.Failures?.ToList() ?? [validation.FailureMessage]);
        }

        var problems = new List<string>();
        return Read(settings, Path.GetFullPath(dataDirectory), problems)
            ?? throw new InvalidOperationException($"settings that passed validation could not be read: {string.Join("; ", problems)}");
    }

    /// <summary>
    /// What <paramref name="settings"/> mean, or null with every problem added to <paramref name="problems"/>:
    /// the rules of <see cref="ServerSettingsValidator"/>.
    /// </summary>
    internal static ServerOptions? Read(ServerSettings settings, string dataDirectory, List<string> problems)
    {
        foreach (var moved in settings.Rebuilds.Keys.Order(StringComparer.Ordinal))
        {
            problems.Add($"Rebuilds:{moved} is no longer read: section Rebuilds moved into section Indexes " +
                $"({SwapLagEtagsSetting}, {DrainTimeoutSetting}); set it there.");
        }

        var server = settings.Server;
        var storage = settings.Storage;
        var address = IPAddress.Loopback;
        var addressText = server.Address;
        if (addressText is not null && !IPAddress.TryParse(addressText.Trim(), out address!))
        {
            problems.Add($"{AddressSetting} is {MessageText.Quote(addressText)}, which is not an IP address; use e.g. 127.0.0.1 (the default), ::1, or 0.0.0.0 for every interface.");
            address = IPAddress.Loopback;
        }

        var port = DefaultPort;
        var portText = server.Port;
        if (portText is not null && (!int.TryParse(portText.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out port) || port > IPEndPoint.MaxPort))
        {
            problems.Add($"{PortSetting} is {MessageText.Quote(portText)}; it must be a whole number from 0 to {IPEndPoint.MaxPort} (0 picks a free port; default {DefaultPort}).");
            port = DefaultPort;
        }

        var apiKey = server.ApiKey;
        if (apiKey is not null && (apiKey.Length < MinApiKeyLength || apiKey.Any(char.IsWhiteSpace)))
        {
            // The key itself is a secret: say what is wrong with it, never echo it.
            problems.Add($"{ApiKeySetting} is {apiKey.Length} characters{(apiKey.Any(char.IsWhiteSpace) ? " and contains whitespace" : string.Empty)}; " +
                $"it must be at least {MinApiKeyLength} characters without whitespace (e.g. the output of `openssl rand -hex 32`).");
            apiKey = null;
        }
        else if (apiKey is null && !IPAddress.IsLoopback(address))
        {
            problems.Add($"{AddressSetting} is {address}, which is reachable from other machines, and {ApiKeySetting} is not set " +
                $"({ReadApiKeySetting} {(server.ReadApiKey is null ? "is not set either" : "is set, but opens reads only beside a full key")}); " +
                $"refusing to serve documents and the admin API without authentication. Set {ApiKeySetting} (at least {MinApiKeyLength} characters; " +
                $"then every request needs a key, and {ReadApiKeySetting} can give clients that only read a key of their own), or bind 127.0.0.1.");
        }

        var readApiKey = ReadKey(server.ReadApiKey, server.ApiKey, problems);

        var maxDocumentBytes = Size(storage.MaxDocumentBytes, MaxDocumentBytesSetting, StoreOptions.DefaultMaxDocumentBytes, problems);
        var blockCacheBytes = Size(storage.BlockCacheBytes, BlockCacheBytesSetting, StoreOptions.Default.BlockCacheBytes, problems);
        var syncWrites = Flag(storage.SyncWrites, SyncWritesSetting, true, "every write waits for the log to reach disk", problems);
        var directReads = Flag(storage.DirectReads, DirectReadsSetting, false, "reads go through the OS page cache", problems);
        var rowCacheBytes = Size(storage.RowCacheBytes, RowCacheBytesSetting, StoreOptions.Default.RowCacheBytes, problems);
        var nativeLibrary = storage.NativeLibrary ?? StoreOptions.DefaultNativeLibrary;

        var allowedHosts = Hosts(settings.AllowedHosts, IPAddress.IsLoopback(address) ? LoopbackHosts : ["*"], problems);
        var limits = ReadLimits(server, problems);
        // Sections Storage and Indexes are the engine's options tree: the text is read here, and the
        // engine's validator judges the values, naming each setting by its path (Indexes:IndexingThreads).
        var indexing = settings.Indexes;
        var defaults = new Indexer.IndexOptions();
        var indexes = defaults with
        {
            IndexingThreads = Whole(indexing.IndexingThreads, IndexingThreadsSetting, defaults.IndexingThreads, problems),
            IndexingThreadNice = Whole(indexing.IndexingThreadNice, IndexingThreadNiceSetting, defaults.IndexingThreadNice, problems),
            BulkCommitInterval = AnyDuration(indexing.BulkCommitInterval, BulkCommitIntervalSetting, defaults.BulkCommitInterval, problems),
            BulkCommitShare = AnyNumber(indexing.BulkCommitShare, BulkCommitShareSetting, defaults.BulkCommitShare, problems),
            SwapLagEtags = Whole(indexing.SwapLagEtags, SwapLagEtagsSetting, defaults.SwapLagEtags, problems),
            DrainTimeout = AnyDuration(indexing.DrainTimeout, DrainTimeoutSetting, defaults.DrainTimeout, problems),
            MaxConcurrentRebuilds = Whole(indexing.MaxConcurrentRebuilds, MaxConcurrentRebuildsSetting, defaults.MaxConcurrentRebuilds, problems),
            SharedPassWindow = AnyDuration(indexing.SharedPassWindow, SharedPassWindowSetting, defaults.SharedPassWindow, problems),
            PrefetchBudgetBytes = Size(indexing.PrefetchBudgetBytes, PrefetchBudgetBytesSetting, defaults.PrefetchBudgetBytes, problems),
        };
        var store = new StoreOptions(maxDocumentBytes, syncWrites, blockCacheBytes, directReads, rowCacheBytes: rowCacheBytes, nativeLibrary: nativeLibrary);
        var engine = new EngineOptions { DataDirectory = dataDirectory, Storage = store, Indexes = indexes };
        // A value that did not read stands at its default here, so the validator adds no second problem for it.
        problems.AddRange(engine.Validate());

        return problems.Count > 0
            ? null
            : new ServerOptions(address, port, apiKey, readApiKey, allowedHosts, limits, engine);
    }

    /// <summary>The effective configuration for the start-up log line (the API keys only as set or not).</summary>
    public override string ToString() =>
        $"data {DataDirectory}, address {Address}, port {Port}, api key {(ApiKey is null ? "not set" : "set")}, " +
        $"read api key {(ReadApiKey is null ? "not set" : "set")}, allowed hosts {string.Join(';', AllowedHosts)}; " +
        $"limits: {Limits}; store: {Store}; indexing threads: {Indexes.IndexingThreads} at nice {Indexes.IndexingThreadNice}; " +
        $"bulk commit every {Indexes.BulkCommitShare.ToString(CultureInfo.InvariantCulture)} of a build, at most {Indexes.BulkCommitInterval.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s; " +
        $"rebuilds at once: {Indexes.MaxConcurrentRebuilds}, sharing a read for {Indexes.SharedPassWindow.TotalSeconds.ToString(CultureInfo.InvariantCulture)} s; prefetch budget for all: {ByteSize.Format(Indexes.PrefetchBudgetBytes)}";

    // The read-only key: the full key's rules, a value of its own, and only beside a full key. The
    // keys are secrets: a refusal says what is wrong, never echoes them.
    private static string? ReadKey(string? readKey, string? apiKey, List<string> problems)
    {
        if (readKey is null)
        {
            return null;
        }

        if (readKey.Length < MinApiKeyLength || readKey.Any(char.IsWhiteSpace))
        {
            problems.Add($"{ReadApiKeySetting} is {readKey.Length} characters{(readKey.Any(char.IsWhiteSpace) ? " and contains whitespace" : string.Empty)}; " +
                $"it must be at least {MinApiKeyLength} characters without whitespace (e.g. the output of `openssl rand -hex 32`).");
            return null;
        }

        if (apiKey is null)
        {
            // Without a full key every request is trusted: a read key would restrict nothing, and an
            // operator who set one expects writes to be closed.
            problems.Add($"{ReadApiKeySetting} is set but {ApiKeySetting} is not: without the full key every request is trusted, so a read-only key " +
                $"would restrict nothing. Set {ApiKeySetting} too (then every request needs one of the keys), or remove {ReadApiKeySetting}.");
            return null;
        }

        if (string.Equals(readKey, apiKey, StringComparison.Ordinal))
        {
            problems.Add($"{ReadApiKeySetting} is the same as {ApiKeySetting}; the read-only key must differ from the full key, or every reader could write. " +
                $"Give {ReadApiKeySetting} a value of its own (e.g. another output of `openssl rand -hex 32`).");
            return null;
        }

        return readKey;
    }

    private static HttpLimits ReadLimits(ServerSettings.ServerSection server, List<string> problems)
    {
        var queryTimeout = Duration(server.QueryTimeout, QueryTimeoutSetting, HttpLimits.DefaultQueryTimeout, _minQueryTimeout, _maxQueryTimeout, problems);
        var queries = Count(server.MaxConcurrentQueries, MaxConcurrentQueriesSetting, HttpLimits.DefaultMaxConcurrentQueries, 1, 10_000, "queries running at once", problems);
        var queue = Count(server.QueryQueueLength, QueryQueueLengthSetting, HttpLimits.DefaultQueryQueueLength, 0, 100_000, "queries waiting for a turn (0: refuse at once)", problems);
        var terms = Count(server.MaxQueryTerms, MaxQueryTermsSetting, Indexer.IndexQuery.DefaultMaxExpandedTerms, 1, Indexer.IndexQuery.MaxExpandedTermsLimit,
            "terms one prefix, wildcard or regular-expression term may expand to", problems);
        var sortKeys = Count(server.MaxSortKeys, MaxSortKeysSetting, Indexer.IndexQuery.DefaultMaxSortKeys, 1, Indexer.IndexQuery.MaxSortKeysLimit,
            "sort keys one query may have", problems);
        var streams = Count(server.MaxEventStreams, MaxEventStreamsSetting, HttpLimits.DefaultMaxEventStreams, 1, 100_000, "admin event streams open at once", problems);
        var connections = Count(server.MaxConnections, MaxConnectionsSetting, HttpLimits.DefaultMaxConnections, 2, 1_000_000, "TCP connections open at once", problems);
        if (connections <= streams)
        {
            problems.Add($"{MaxConnectionsSetting} is {connections}, not above {MaxEventStreamsSetting} ({streams}): every event stream holds a connection, " +
                $"so streams could take them all; raise {MaxConnectionsSetting} or lower {MaxEventStreamsSetting}.");
        }

        var minResponseRate = Count(server.MinResponseBytesPerSecond, MinResponseBytesPerSecondSetting, HttpLimits.DefaultMinResponseBytesPerSecond, 1, 1_000_000_000,
            "bytes a second a client must read an answer at, on average, after a 5 s grace", problems);
        return new HttpLimits(queryTimeout, queries, queue, terms, sortKeys, streams, connections, minResponseRate);
    }

    // A whole number in [min, max]; a problem naming the setting, its range and what it counts otherwise.
    private static int Count(string? text, string setting, int defaultValue, int min, int max, string counts, List<string> problems)
    {
        if (text is null)
        {
            return defaultValue;
        }

        if (int.TryParse(text.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out var value) && value >= min && value <= max)
        {
            return value;
        }

        problems.Add($"{setting} is {MessageText.Quote(text)}; it must be a whole number from {min:N0} to {max:N0} ({counts}; default {defaultValue:N0}).");
        return defaultValue;
    }

    // A whole number (threads, a nice value, etags); its range is the engine validator's rule.
    private static T Whole<T>(string? text, string setting, T defaultValue, List<string> problems)
        where T : IBinaryInteger<T>
    {
        if (text is null)
        {
            return defaultValue;
        }

        if (T.TryParse(text.Trim(), NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value))
        {
            return value;
        }

        problems.Add($"{setting} is {MessageText.Quote(text)}, which is not a whole number (default {defaultValue:N0}).");
        return defaultValue;
    }

    // "10s", "1.5 s", "250ms", "2min" or a TimeSpan ("00:00:10"), in [min, max].
    private static TimeSpan Duration(string? text, string setting, TimeSpan defaultValue, TimeSpan min, TimeSpan max, List<string> problems)
    {
        if (text is null)
        {
            return defaultValue;
        }

        if (TryParseDuration(text, out var value) && value >= min && value <= max)
        {
            return value;
        }

        problems.Add($"{setting} is {MessageText.Quote(text)}; it must be a duration from {min.TotalMilliseconds:0} ms to {max.TotalMinutes:0} min, " +
            $"written like 10s, 1.5s, 250ms, 2min or 00:00:10 (default {defaultValue.TotalSeconds:0} s).");
        return defaultValue;
    }

    // A duration written as Duration takes it; its range is the engine validator's rule.
    private static TimeSpan AnyDuration(string? text, string setting, TimeSpan defaultValue, List<string> problems)
    {
        if (text is null)
        {
            return defaultValue;
        }

        if (TryParseDuration(text, out var value))
        {
            return value;
        }

        problems.Add($"{setting} is {MessageText.Quote(text)}, which is not a duration; write it like 10s, 1.5s, 250ms, 2min or 00:00:10 (default {defaultValue.TotalSeconds:0} s).");
        return defaultValue;
    }

    // A decimal number such as 0.05; its range is the engine validator's rule.
    private static double AnyNumber(string? text, string setting, double defaultValue, List<string> problems)
    {
        if (text is null)
        {
            return defaultValue;
        }

        if (double.TryParse(text.Trim(), NumberStyles.AllowDecimalPoint | NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out var value))
        {
            return value;
        }

        problems.Add(string.Create(CultureInfo.InvariantCulture, $"{setting} is {MessageText.Quote(text)}, which is not a number; write it like 0.05 (default {defaultValue})."));
        return defaultValue;
    }

    internal static bool TryParseDuration(string text, out TimeSpan value)
    {
        var trimmed = text.Trim();
        foreach (var (unit, scale) in new[] { ("ms", 1e-3), ("min", 60.0), ("s", 1.0) })
        {
            if (trimmed.EndsWith(unit, StringComparison.OrdinalIgnoreCase)
                && double.TryParse(trimmed[..^unit.Length].TrimEnd(), NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var number)
                && number * scale < TimeSpan.MaxValue.TotalSeconds)
            {
                value = TimeSpan.FromSeconds(number * scale);
                return true;
            }
        }

        return TimeSpan.TryParseExact(trimmed, "c", CultureInfo.InvariantCulture, out value) && value >= TimeSpan.Zero;
    }

    // Semicolon-separated host names without scheme, port or path ("*" for any, "*.example.com" for subdomains).
    private static IReadOnlyList<string> Hosts(string? text, IReadOnlyList<string> defaultValue, List<string> problems)
    {
        if (text is null)
        {
            return defaultValue;
        }

        var hosts = text.Split(';', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries);
        var bad = hosts.FirstOrDefault(h => h.Contains("://", StringComparison.Ordinal) || h.Contains('/') || h.Any(char.IsWhiteSpace)
            || (h.Contains(':') && !(h.StartsWith('[') && h.EndsWith(']'))));
        if (hosts.Length > 0 && bad is null)
        {
            return hosts;
        }

        problems.Add($"{AllowedHostsSetting} is {MessageText.Quote(text)}; it must be host names separated by ';', without scheme, port or path " +
            $"(e.g. localhost;127.0.0.1;[::1], the default on a loopback address; * for any)" + (bad is null ? "." : $", and {MessageText.Quote(bad)} is not one."));
        return defaultValue;
    }

    private static long Size(string? text, string setting, long defaultValue, List<string> problems)
    {
        if (text is null)
        {
            return defaultValue;
        }

        if (ByteSize.TryParse(text, out var bytes))
        {
            return bytes;
        }

        problems.Add($"{setting} is {MessageText.Quote(text)}, which is not a size; write bytes or a size with a unit, e.g. 67108864, 64MiB or 1.5 GiB.");
        return defaultValue;
    }

    // true or false (any case, surrounding spaces allowed); a problem naming the default and what it means otherwise.
    private static bool Flag(string? text, string setting, bool defaultValue, string defaultMeaning, List<string> problems)
    {
        if (text is null)
        {
            return defaultValue;
        }

        if (bool.TryParse(text.Trim(), out var value))
        {
            return value;
        }

        problems.Add($"{setting} is {MessageText.Quote(text)}; it must be true or false (default {(defaultValue ? "true" : "false")}: {defaultMeaning}).");
        return defaultValue;
    }
}

/// <summary>The server's configuration is invalid; the message lists every problem, each naming its setting.</summary>
internal sealed class ServerConfigurationException : Exception
{
    public ServerConfigurationException(IReadOnlyList<string> problems)
        : base(problems.Count == 1 ? problems[0] : "invalid configuration:" + string.Concat(problems.Select(p => Environment.NewLine + "  - " + p)))
    {
        Problems = problems;
    }

    public IReadOnlyList<string> Problems { get; }
}
