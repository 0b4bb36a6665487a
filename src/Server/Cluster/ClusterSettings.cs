using Indexing.Cluster;
using Microsoft.Extensions.Configuration;

namespace Indexing.Server.Cluster;

/// <summary>
/// The <c>Cluster:*</c> settings (<c>serve --cluster ... --node ...</c> sets the first two):
/// <c>Cluster:Endpoints</c> (etcd's client URLs, comma-separated; unset: a single node),
/// <c>Cluster:NodeId</c>, <c>Cluster:AdvertiseUrl</c>, <c>Cluster:Prefix</c>, <c>Cluster:LeaseTtl</c>, <c>Cluster:PollInterval</c>,
/// <c>Cluster:EtcdTimeout</c>, <c>Cluster:RetireGrace</c> (time spans as 00:00:05) and <c>Cluster:ReadyLagEtags</c>.
/// </summary>
internal static class ClusterSettings
{
    public const string EndpointsSetting = "Cluster:Endpoints";
    public const string NodeIdSetting = "Cluster:NodeId";
    public const string AdvertiseUrlSetting = "Cluster:AdvertiseUrl";

    /// <summary>
    /// The URL the other nodes reach this one at: <c>Cluster:AdvertiseUrl</c>, or the address the server
    /// listens on when that is one address (a node listening on every interface, 0.0.0.0 or ::, must say
    /// which of its addresses the others use); throws <see cref="ServerConfigurationException"/> otherwise.
    /// </summary>
    public static Uri AdvertisedUrl(IConfiguration configuration, Uri listening)
    {
        if (configuration[AdvertiseUrlSetting] is { } text)
        {
            return Uri.TryCreate(text, UriKind.Absolute, out var url) && url.Scheme is "http" or "https" && url.AbsolutePath == "/"
                ? url
                : throw new Hosting.ServerConfigurationException([$"{AdvertiseUrlSetting} is {MessageText.Quote(text)}; give the URL other nodes reach this one at, e.g. http://10.0.0.5:5080/ (scheme, host and port only)."]);
        }

        if (System.Net.IPAddress.TryParse(listening.Host.Trim('[', ']'), out var address) && (address.Equals(System.Net.IPAddress.Any) || address.Equals(System.Net.IPAddress.IPv6Any)))
        {
            throw new Hosting.ServerConfigurationException([
                $"the node listens on every interface ({listening}), so the other nodes cannot be told where to reach it; set {AdvertiseUrlSetting} (e.g. http://10.0.0.5:{listening.Port}/)."]);
        }

        return listening;
    }

    /// <summary>The node's cluster options, or null when <c>Cluster:Endpoints</c> is not set; throws <see cref="ServerConfigurationException"/> naming bad values.</summary>
    public static ClusterOptions? Read(IConfiguration configuration)
    {
        var section = configuration.GetSection("Cluster");
        var endpoints = section["Endpoints"];
        if (string.IsNullOrWhiteSpace(endpoints))
        {
            return null;
        }

        var defaults = new ClusterOptions { Endpoints = endpoints, NodeId = section["NodeId"] ?? string.Empty };
        var problems = new List<string>();
        var options = defaults with
        {
            Prefix = section["Prefix"] ?? defaults.Prefix,
            LeaseTtl = Span(section, "LeaseTtl", defaults.LeaseTtl, problems),
            PollInterval = Span(section, "PollInterval", defaults.PollInterval, problems),
            EtcdTimeout = Span(section, "EtcdTimeout", defaults.EtcdTimeout, problems),
            RetireGrace = Span(section, "RetireGrace", defaults.RetireGrace, problems),
            ReadyLagEtags = section["ReadyLagEtags"] is { } lag && long.TryParse(lag, System.Globalization.CultureInfo.InvariantCulture, out var parsed) ? parsed : defaults.ReadyLagEtags,
        };
        if (string.IsNullOrEmpty(options.NodeId))
        {
            problems.Add($"{NodeIdSetting} is not set; a node in a cluster needs its id from the shard map (serve --cluster ... --node n1).");
        }

        if (problems.Count == 0)
        {
            try
            {
                options.Validate();
            }
            catch (ArgumentException e)
            {
                problems.Add(e.Message);
            }
        }

        return problems.Count == 0 ? options : throw new Hosting.ServerConfigurationException(problems);
    }

    private static TimeSpan Span(IConfigurationSection section, string name, TimeSpan fallback, List<string> problems)
    {
        if (section[name] is not { } text)
        {
            return fallback;
        }

        if (TimeSpan.TryParse(text, System.Globalization.CultureInfo.InvariantCulture, out var value))
        {
            return value;
        }

        problems.Add($"Cluster:{name} is {MessageText.Quote(text)}, which is not a time span; write it as 00:00:05 for 5 s.");
        return fallback;
    }
}
