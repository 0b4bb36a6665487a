using Indexing.Cluster;

namespace Indexing.Server.Cluster;

/// <summary><c>GET /cluster</c>: the shard map, who is up, etcd's reachability from this node and this node's write gate.</summary>
internal sealed record ClusterStatus(
    string Node,
    int Buckets,
    IReadOnlyList<ClusterMemberView> Nodes,
    bool EtcdReachable,
    DateTimeOffset? EtcdUnreachableSince,
    string? EtcdError,
    long Revision,
    bool AcceptingWrites,
    string? NotAcceptingWritesBecause)
{
    public static ClusterStatus Of(ClusterNode node)
    {
        var snapshot = node.Snapshot;
        var (since, error) = node.EtcdUnreachable;
        var accepting = node.CanAcceptWrites(out var reason);
        return new ClusterStatus(
            node.NodeId,
            node.Map.Buckets,
            [.. node.Map.Nodes.Select(n => new ClusterMemberView(n, snapshot.IsAlive(n), snapshot.Members.TryGetValue(n, out var m) ? m.Url : null, node.Map.BucketsOf(n).Count()))],
            since is null,
            since,
            error,
            snapshot.Revision,
            accepting,
            reason);
    }
}

/// <summary>One node of the map: whether it holds a live lease, where it answers, how many buckets it owns.</summary>
internal sealed record ClusterMemberView(string Node, bool Up, string? Url, int Buckets);

/// <summary>
/// A cluster index: its active generation (what every query reads), the pending one being built on
/// every shard, and each shard's report on the newest, with whether its node is up.
/// </summary>
internal sealed record ClusterIndexView(
    string Name,
    int ActiveGeneration,
    int? PendingGeneration,
    DateTimeOffset? SwitchedAt,
    System.Text.Json.JsonElement Definition,
    IReadOnlyList<ShardProgressView> Shards,
    string? Result = null)
{
    /// <summary>The view of <paramref name="index"/>; shards' failure texts only for requests with the full key, as on a single node.</summary>
    public static ClusterIndexView Of(ClusterNode node, ClusterIndex index, Microsoft.AspNetCore.Http.HttpContext context)
    {
        var details = Http.ApiKeyGate.CanSeeDetails(context);
        var reports = node.ProgressOf(index.Name);
        var newest = index.Newest.Generation;
        return new ClusterIndexView(
            index.Name,
            index.Active.Generation,
            index.Pending?.Generation,
            index.SwitchedAt,
            index.Newest.Definition,
            [.. node.Map.Nodes.Select(n => reports.TryGetValue(n, out var report) && report.Generation == newest
                ? new ShardProgressView(n, node.Snapshot.IsAlive(n), report.Generation, report.Phase, report.Ready, report.DocumentsDone, report.DocumentsTotal, report.LagEtags, report.Error is null || details ? report.Error : Http.FailureTexts.Withheld, report.At)
                : new ShardProgressView(n, node.Snapshot.IsAlive(n), newest, "NotReported", false, 0, 0, 0, null, null))]);
    }
}

/// <summary>One shard's build of an index's newest generation, as it last reported it in etcd.</summary>
internal sealed record ShardProgressView(
    string Node, bool Up, int Generation, string Phase, bool Ready, long DocumentsDone, long DocumentsTotal, long LagEtags, string? Error, DateTimeOffset? At);
