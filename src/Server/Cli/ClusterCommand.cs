using System.CommandLine;
using Indexing.Cluster;

namespace Indexing.Server.Cli;

// `cluster init`: writes a new cluster's shard map to etcd, once. A second init of the same cluster
// changes nothing and says which map it has (moving buckets is resharding: docs/cluster.md).
internal static class ClusterCommand
{
    public static Command Create()
    {
        var endpoints = new Option<string>("--cluster")
        {
            Description = "etcd's client URLs, comma-separated (e.g. http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379).",
            Required = true,
        };
        var nodes = new Option<string>("--nodes")
        {
            Description = "The nodes' ids, comma-separated (e.g. n1,n2,n3); each node then runs `serve --cluster ... --node <id>`.",
            Required = true,
        };
        var buckets = new Option<int>("--buckets")
        {
            Description = $"How many buckets the document ids are hashed into, dealt round robin over the nodes (default {ShardMap.DefaultBuckets}, at most {ShardMap.MaxBuckets}).",
            DefaultValueFactory = _ => ShardMap.DefaultBuckets,
        };
        var prefix = new Option<string>("--prefix")
        {
            Description = $"The cluster's key prefix in etcd (default {ClusterKeys.DefaultPrefix}; the nodes' Cluster:Prefix).",
            DefaultValueFactory = _ => ClusterKeys.DefaultPrefix,
        };
        var init = new Command("init", "Write a new cluster's shard map to etcd (once; a cluster's map never changes).") { endpoints, nodes, buckets, prefix };
        CommandLine.SetCancellableAction(init, async (parse, cancellationToken) =>
        {
            ShardMap map;
            try
            {
                map = ShardMap.RoundRobin([.. parse.GetValue(nodes)!.Split(',', StringSplitOptions.TrimEntries)], parse.GetValue(buckets));
            }
            catch (ArgumentException e)
            {
                await Console.Error.WriteLineAsync($"cluster init: {e.Message}").ConfigureAwait(false);
                return 2;
            }

            using var etcd = new EtcdCoordinator(parse.GetValue(endpoints)!, new ClusterKeys(parse.GetValue(prefix)!), TimeSpan.FromSeconds(5));
            try
            {
                var (stored, created) = await etcd.InitializeMapAsync(map, cancellationToken).ConfigureAwait(false);
                var described = $"{stored.Buckets} buckets over {string.Join(", ", stored.Nodes.Select(n => $"{n} ({stored.BucketsOf(n).Count()})"))}";
                if (created)
                {
                    await Console.Out.WriteLineAsync($"cluster created under {etcd.Keys.Prefix} in etcd: {described}. Start each node with `indexing serve --cluster {etcd.Endpoints} --node <id>`.").ConfigureAwait(false);
                    return 0;
                }

                if (stored == map || (stored.Buckets == map.Buckets && stored.Nodes.SequenceEqual(map.Nodes) && stored.Owners.SequenceEqual(map.Owners)))
                {
                    await Console.Out.WriteLineAsync($"the cluster under {etcd.Keys.Prefix} already has this map ({described}); nothing changed.").ConfigureAwait(false);
                    return 0;
                }

                await Console.Error.WriteLineAsync($"cluster init: the cluster under {etcd.Keys.Prefix} already has a different map ({described}); a cluster's map is written once (moving buckets is resharding, not supported). Nothing changed.").ConfigureAwait(false);
                return 1;
            }
            catch (ClusterUnavailableException e)
            {
                await Console.Error.WriteLineAsync($"cluster init: {e.Message}").ConfigureAwait(false);
                return 2;
            }
        });
        return new Command("cluster", "A cluster of nodes coordinated by etcd (docs/cluster.md).") { init };
    }
}
