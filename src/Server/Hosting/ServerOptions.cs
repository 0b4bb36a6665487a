using System.Globalization;
using System.Net;
using Indexing.Storage;
using Microsoft.Extensions.Configuration;

namespace Indexing.Server.Hosting;

/// <summary>
/// The server's settings (sections <c>Server</c> and <c>Storage</c>), read once at start from the
/// merged configuration (appsettings.json, environment variables such as <c>Server__Port</c>, the
/// command line) and validated then: every problem is reported at once, each naming its setting.
/// Nothing here changes while the server runs; live prefetch limits go through the admin API.
/// </summary>
internal sealed class ServerOptions
{
    public const int DefaultPort = 5080;
    public const string AddressSetting = "Server:Address";
    public const string PortSetting = "Server:Port";
    public const string ApiKeySetting = "Server:ApiKey";
    public const string MaxDocumentBytesSetting = "Storage:MaxDocumentBytes";
    public const string SyncWritesSetting = "Storage:SyncWrites";
    public const string BlockCacheBytesSetting = "Storage:BlockCacheBytes";
    public const string DirectReadsSetting = "Storage:DirectReads";

    // Shorter keys are guessable; the key is compared in constant time, so its length is the only defence.
    public const int MinApiKeyLength = 16;

    private ServerOptions(string dataDirectory, IPAddress address, int port, string? apiKey, StoreOptions store)
    {
        DataDirectory = dataDirectory;
        Address = address;
        Port = port;
        ApiKey = apiKey;
        Store = store;
    }

    /// <summary>The data directory; the store lives in <see cref="StoreDirectory"/>.</summary>
    public string DataDirectory { get; }

    public string StoreDirectory => Path.Combine(DataDirectory, "store");

    /// <summary>Where the index catalog and the Lucene indexes live.</summary>
    public string IndexesDirectory => Path.Combine(DataDirectory, "indexes");

    /// <summary>The address Kestrel binds; loopback unless configured.</summary>
    public IPAddress Address { get; }

    /// <summary>TCP port; 0 asks the OS for a free one (tests).</summary>
    public int Port { get; }

    /// <summary>When set, writes, /admin and /metrics need it (X-Api-Key or Authorization: Bearer).</summary>
    public string? ApiKey { get; }

    public StoreOptions Store { get; }

    /// <summary>Reads and validates the settings; throws <see cref="ServerConfigurationException"/> listing every problem.</summary>
    public static ServerOptions Bind(IConfiguration configuration, string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        ArgumentException.ThrowIfNullOrWhiteSpace(dataDirectory);
        var problems = new List<string>();

        var address = IPAddress.Loopback;
        var addressText = configuration[AddressSetting];
        if (addressText is not null && !IPAddress.TryParse(addressText.Trim(), out address!))
        {
            problems.Add($"{AddressSetting} is {MessageText.Quote(addressText)}, which is not an IP address; use e.g. 127.0.0.1 (the default), ::1, or 0.0.0.0 for every interface.");
            address = IPAddress.Loopback;
        }

        var port = DefaultPort;
        var portText = configuration[PortSetting];
        if (portText is not null && (!int.TryParse(portText.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out port) || port > IPEndPoint.MaxPort))
        {
            problems.Add($"{PortSetting} is {MessageText.Quote(portText)}; it must be a whole number from 0 to {IPEndPoint.MaxPort} (0 picks a free port; default {DefaultPort}).");
            port = DefaultPort;
        }

        var apiKey = configuration[ApiKeySetting];
        if (apiKey is not null && (apiKey.Length < MinApiKeyLength || apiKey.Any(char.IsWhiteSpace)))
        {
            // The key itself is a secret: say what is wrong with it, never echo it.
            problems.Add($"{ApiKeySetting} is {apiKey.Length} characters{(apiKey.Any(char.IsWhiteSpace) ? " and contains whitespace" : string.Empty)}; " +
                $"it must be at least {MinApiKeyLength} characters without whitespace (e.g. the output of `openssl rand -hex 32`).");
            apiKey = null;
        }
        else if (apiKey is null && !IPAddress.IsLoopback(address))
        {
            problems.Add($"{AddressSetting} is {address}, which is reachable from other machines, and {ApiKeySetting} is not set; " +
                $"refusing to serve documents and the admin API without authentication. Set {ApiKeySetting} (at least {MinApiKeyLength} characters), " +
                $"or bind 127.0.0.1.");
        }

        var maxDocumentBytes = Size(configuration, MaxDocumentBytesSetting, StoreOptions.DefaultMaxDocumentBytes, problems);
        var blockCacheBytes = Size(configuration, BlockCacheBytesSetting, StoreOptions.Default.BlockCacheBytes, problems);
        var syncWrites = Flag(configuration, SyncWritesSetting, true, "every write waits for the log to reach disk", problems);
        var directReads = Flag(configuration, DirectReadsSetting, false, "reads go through the OS page cache", problems);

        StoreOptions? store = null;
        try
        {
            store = new StoreOptions(maxDocumentBytes, syncWrites, blockCacheBytes, directReads);
        }
        catch (ArgumentOutOfRangeException e)
        {
            // StoreOptions names the setting and its range itself; drop the parameter suffix the BCL appends.
            problems.Add(e.Message.Split(" (Parameter", 2)[0]);
        }

        if (problems.Count > 0 || store is null)
        {
            throw new ServerConfigurationException(problems);
        }

        return new ServerOptions(Path.GetFullPath(dataDirectory), address, port, apiKey, store);
    }

    /// <summary>The effective configuration for the start-up log line (the API key only as set or not).</summary>
    public override string ToString() =>
        $"data {DataDirectory}, address {Address}, port {Port}, api key {(ApiKey is null ? "not set" : "set")}; store: {Store}";

    private static long Size(IConfiguration configuration, string setting, long defaultValue, List<string> problems)
    {
        var text = configuration[setting];
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
    private static bool Flag(IConfiguration configuration, string setting, bool defaultValue, string defaultMeaning, List<string> problems)
    {
        var text = configuration[setting];
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
