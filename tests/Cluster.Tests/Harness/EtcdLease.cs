using dotnet_etcd;
using Etcdserverpb;

namespace Indexing.Cluster.Tests;

/// <summary>Lease calls that dotnet-etcd 10.0.0 has only as streams, made one request at a time.</summary>
public static class EtcdLease
{
    /// <summary>
    /// One keep-alive of <paramref name="leaseId"/>: opens etcd's LeaseKeepAlive stream on the
    /// client's own channel (<see cref="EtcdClient.GetConnection"/>), writes one request, half-closes,
    /// reads the one response. Returns its TTL: the lease's full TTL again when renewed, 0 when etcd
    /// no longer has the lease (expired or revoked; etcd answers, it does not fail). A missed
    /// <paramref name="deadline"/> throws RpcException DeadlineExceeded like any unary call.
    /// </summary>
    public static async Task<long> KeepAliveOnceAsync(EtcdClient client, long leaseId, DateTime deadline)
    {
        using var call = client.GetConnection().LeaseClient.LeaseKeepAlive(deadline: deadline);
        await call.RequestStream.WriteAsync(new LeaseKeepAliveRequest { ID = leaseId });
        await call.RequestStream.CompleteAsync();
        if (!await call.ResponseStream.MoveNext(CancellationToken.None))
        {
            throw new InvalidOperationException($"etcd ended the keep-alive stream of lease {leaseId:x} without a response");
        }

        return call.ResponseStream.Current.TTL;
    }
}
