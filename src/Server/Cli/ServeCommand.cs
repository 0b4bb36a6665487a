using System.CommandLine;
using System.Globalization;
using Indexing.Cluster;
using Indexing.Server.Cluster;
using Indexing.Server.Hosting;
using Indexing.Storage;
using Microsoft.Extensions.Hosting;

namespace Indexing.Server.Cli;

// `serve`: the HTTP API and admin page over the store in <data>/store, until SIGTERM or Ctrl+C.
// Every setting can also come from appsettings.json, environment variables (Server__Port) or
// ASP.NET Core style arguments (--Storage:MaxDocumentBytes=16MiB), which is why tokens this
// command does not know are passed on to the configuration instead of being refused.
internal static class ServeCommand
{
    public static Command Create()
    {
        var data = new Option<DirectoryInfo>("--data")
        {
            Description = "Data directory: the RocksDB store lives in <data>/store (created when missing).",
            DefaultValueFactory = _ => new DirectoryInfo("data"),
        };
        var address = new Option<string?>("--address")
        {
            Description = $"IP address to listen on ({ServerOptions.AddressSetting}; default 127.0.0.1). Any non-loopback address needs {ServerOptions.ApiKeySetting}.",
        };
        var port = new Option<int?>("--port")
        {
            Description = $"TCP port ({ServerOptions.PortSetting}; default {ServerOptions.DefaultPort}; 0 picks a free one).",
        };
        var cluster = new Option<string?>("--cluster")
        {
            Description = $"Join the cluster coordinated by etcd at these client URLs, comma-separated ({ClusterSettings.EndpointsSetting}); needs --node. " +
                "The cluster's shard map is written once first: `indexing cluster init`.",
        };
        var node = new Option<string?>("--node")
        {
            Description = $"This node's id in the cluster's shard map ({ClusterSettings.NodeIdSetting}), e.g. n1.",
        };

        var command = new Command(
            "serve",
            "Serve documents and the admin API/page over HTTP. Settings: Server:Address, Server:Port, Server:ApiKey, Server:ReadApiKey, AllowedHosts, Server:QueryTimeout, " +
            "Server:MaxConcurrentQueries, Server:QueryQueueLength, Server:MaxQueryTerms, Server:MaxSortKeys, Server:MaxEventStreams, Server:MaxConnections, " +
            "Storage:MaxDocumentBytes, Storage:SyncWrites, Storage:BlockCacheBytes, Storage:RowCacheBytes, Storage:DirectReads, Storage:NativeLibrary, " +
            "Indexes:IndexingThreads, Indexes:IndexingThreadNice, Logging:LogLevel:Microsoft.AspNetCore (docs/configuration.md lists every setting), " +
            "from appsettings.json, environment (Server__Port) or arguments (--Server:QueryTimeout=5s).")
        {
            data, address, port, cluster, node,
        };
        command.TreatUnmatchedTokensAsErrors = false;
        CommandLine.SetCancellableAction(command, async (parse, cancellationToken) =>
        {
            var overrides = new Dictionary<string, string?>();
            if (parse.GetValue(address) is { } addressText)
            {
                overrides[ServerOptions.AddressSetting] = addressText;
            }

            if (parse.GetValue(port) is { } portNumber)
            {
                overrides[ServerOptions.PortSetting] = portNumber.ToString(CultureInfo.InvariantCulture);
            }

            if (parse.GetValue(cluster) is { } endpoints)
            {
                overrides[ClusterSettings.EndpointsSetting] = endpoints;
            }

            if (parse.GetValue(node) is { } nodeId)
            {
                overrides[ClusterSettings.NodeIdSetting] = nodeId;
            }

            ServerHost host;
            try
            {
                host = await ServerHost.StartAsync(parse.GetValue(data)!.FullName, [.. parse.UnmatchedTokens], overrides, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is ServerConfigurationException or DocumentStoreException or IOException or InvalidDataException
                or ClusterUnavailableException or InvalidOperationException)
            {
                await Console.Error.WriteLineAsync($"serve: {e.Message}").ConfigureAwait(false);
                return 2;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                // Stopped while starting: a normal stop, and the host closed what it had opened.
                await Console.Out.WriteLineAsync("stopped before listening; the store is closed").ConfigureAwait(false);
                return 0;
            }

            await using (host.ConfigureAwait(false))
            {
                var joined = host.Cluster is { } member ? $" as node {member.NodeId} of the cluster (etcd {member.Options.Endpoints})" : string.Empty;
                await Console.Out.WriteLineAsync($"serving {host.BaseAddress}{joined} (admin page {host.BaseAddress}admin); Ctrl+C or SIGTERM stops").ConfigureAwait(false);
                await ServerHost.WaitUntilStoppedAsync(cancellationToken).ConfigureAwait(false);
            }

            await Console.Out.WriteLineAsync("stopped; the store is closed").ConfigureAwait(false);
            return 0;
        });
        return command;
    }
}
