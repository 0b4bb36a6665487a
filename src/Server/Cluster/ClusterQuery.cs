using Indexing.Cluster;
using Microsoft.AspNetCore.Http;

namespace Indexing.Server.Cluster;

internal static class ClusterQuery
{
    public static Task<IResult> RunAsync(string name, HttpContext context, ClusterNode node, ShardClient shards, CancellationToken cancellationToken) =>
        throw new NotImplementedException();
}
