using System.Net;
using System.Text.Json;

namespace Indexing.Cluster.Tests;

/// <summary>
/// The cluster's promises under faults, each with real etcd members and nodes on loopback:
/// <list type="bullet">
/// <item>one etcd member down (the leader, the harder case): everything goes on;</item>
/// <item>etcd without quorum: definition changes answer 503, documents and queries go on;</item>
/// <item>a node cut off from etcd: once its lease can have expired it takes no writes for its
/// buckets, the other nodes answer 503 naming it, and it joins again when etcd is back.</item>
/// </list>
/// The node killed mid-rebuild is in <see cref="ClusterScenarioTests"/>.
/// </summary>
[Collection(ClusterProcesses.Name)]
public sealed class ClusterFaultTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(90);
    private static readonly ShardMap Map = ShardMap.RoundRobin(["n1", "n2", "n3"], 16);

    [Fact]
    public async Task OneEtcdMemberDown_TheLeader_DocumentsQueriesAndADefinitionChangeGoOn()
    {
        await using var etcd = await EtcdCluster.StartAsync();
        await using var cluster = await ClusterNodes.StartAsync(etcd.Endpoints, 16, "n1", "n2", "n3");
        await LoadAndDefineAsync(cluster, 300);

        etcd.KillMember(await etcd.LeaderIndexAsync(TimeSpan.FromSeconds(10)));

        // Documents never touch etcd: every owner takes its writes at once.
        foreach (var node in Map.Nodes)
        {
            using var put = await cluster.PutDocumentAsync("n2", IdOwnedBy(node, "after-member-down"), ClusterApi.Order(1, a: true));
            Assert.True(put.IsSuccessStatusCode, $"a write owned by {node}: {(int)put.StatusCode} {await put.Content.ReadAsStringAsync()}");
        }

        var (queried, answer) = await cluster.QueryAsync("n3", "q=*:*&take=1");
        Assert.True(queried == HttpStatusCode.OK, answer.ToString());

        // A definition change rides out the election and switches on the two members left.
        var (changed, body) = await cluster.DefineAsync("n3", ClusterApi.V2);
        Assert.True(changed == HttpStatusCode.Accepted, body);
        await cluster.WaitForActiveAsync("n2", 2, Patience);
        Assert.Equal(303, (await cluster.QueryAsync("n1", "q=*:*&take=1")).Body.GetProperty("totalHits").GetInt64());
    }

    [Fact]
    public async Task QuorumLost_DefinitionChangesAnswer503_WhileDocumentsAndQueriesGoOn()
    {
        await using var etcd = await EtcdCluster.StartAsync();
        await using var cluster = await ClusterNodes.StartAsync(etcd.Endpoints, 16, "n1", "n2", "n3");
        await LoadAndDefineAsync(cluster, 300);

        etcd.KillMember(0);
        etcd.KillMember(1);

        var (changed, body) = await cluster.DefineAsync("n2", ClusterApi.V2);
        Assert.True(changed == HttpStatusCode.ServiceUnavailable, body);
        Assert.Contains("quorum", body, StringComparison.Ordinal);
        Assert.Contains("nothing changed", body, StringComparison.Ordinal);

        // Longer than a lease (3 s): without a leader etcd expires no lease, so every node keeps its
        // buckets' writes, and queries read the active generation as before.
        await Task.Delay(TimeSpan.FromSeconds(5));
        var written = 0;
        foreach (var node in Map.Nodes)
        {
            using var put = await cluster.PutDocumentAsync("n1", IdOwnedBy(node, "without-quorum"), ClusterApi.Order(1, a: true));
            Assert.True(put.IsSuccessStatusCode, $"a write owned by {node} without etcd's quorum: {(int)put.StatusCode} {await put.Content.ReadAsStringAsync()}");
            written++;
        }

        await ClusterNodes.WaitUntilAsync(
            async () => (await cluster.QueryAsync("n3", "q=*:*&take=1")).Body.GetProperty("totalHits").GetInt64() == 300 + written,
            Patience,
            () => "the writes made without quorum found by a query");
        var status = await cluster.GetJsonAsync("n2", "cluster");
        Assert.False(status.GetProperty("etcdReachable").GetBoolean(), status.ToString());
        Assert.True(status.GetProperty("acceptingWrites").GetBoolean(), status.ToString());

        // Quorum back: the same change goes through and switches.
        etcd.StartMember(0);
        etcd.StartMember(1);
        await etcd.WaitHealthyAsync(Patience);
        var (retried, retriedBody) = await cluster.DefineAsync("n2", ClusterApi.V2);
        Assert.True(retried == HttpStatusCode.Accepted, retriedBody);
        await cluster.WaitForActiveAsync("n3", 2, Patience);
    }

    [Fact]
    public async Task NodeCutOffFromEtcd_StopsTakingWritesForItsBuckets_AndJoinsAgainWhenEtcdIsBack()
    {
        await using var etcd = await EtcdCluster.StartAsync();
        using var relays = new RelaySet(etcd);
        var cluster = new ClusterNodes(etcd.Endpoints, "n1", "n2", "n3");
        await using (cluster)
        {
            cluster.ReachEtcdThrough("n3", relays.Endpoints);
            await cluster.InitializeAndStartAsync(16);
            var own = IdOwnedBy("n3", "cut-off");
            var other = IdOwnedBy("n1", "cut-off");
            using (var before = await cluster.PutDocumentAsync("n3", own, ClusterApi.Order(1, a: true)))
            {
                Assert.True(before.IsSuccessStatusCode, await before.Content.ReadAsStringAsync());
            }

            relays.Cut();

            // Within its lease (3 s) plus a renewal's timeout, n3 stops taking writes for its buckets.
            await ClusterNodes.WaitUntilAsync(
                async () => !(await cluster.GetJsonAsync("n3", "cluster")).GetProperty("acceptingWrites").GetBoolean(),
                TimeSpan.FromSeconds(15),
                () => "n3 refusing writes once cut off");
            using (var refused = await cluster.PutDocumentAsync("n3", own, ClusterApi.Order(2, a: true)))
            {
                var detail = await refused.Content.ReadAsStringAsync();
                Assert.True(refused.StatusCode == HttpStatusCode.ServiceUnavailable, detail);
                Assert.Contains("lease", detail, StringComparison.Ordinal);
            }

            // etcd expired its lease: the other nodes see n3 down and answer 503 naming it.
            await ClusterNodes.WaitUntilAsync(
                async () => (await cluster.GetJsonAsync("n1", "cluster")).GetProperty("nodes").EnumerateArray().Any(n => n.GetProperty("node").GetString() == "n3" && !n.GetProperty("up").GetBoolean()),
                TimeSpan.FromSeconds(15),
                () => "n1 seeing n3 down");
            using (var down = await cluster.PutDocumentAsync("n1", own, ClusterApi.Order(3, a: true)))
            {
                var detail = await down.Content.ReadAsStringAsync();
                Assert.True(down.StatusCode == HttpStatusCode.ServiceUnavailable, detail);
                Assert.Contains("'n3'", detail, StringComparison.Ordinal);
            }

            // Writes owned by the others still go through n3.
            using (var routed = await cluster.PutDocumentAsync("n3", other, ClusterApi.Order(4, a: true)))
            {
                Assert.True(routed.IsSuccessStatusCode, await routed.Content.ReadAsStringAsync());
            }

            relays.Restore();
            await ClusterNodes.WaitUntilAsync(
                async () => (await cluster.GetJsonAsync("n3", "cluster")).GetProperty("acceptingWrites").GetBoolean()
                    && (await cluster.GetJsonAsync("n1", "cluster")).GetProperty("nodes").EnumerateArray().All(n => n.GetProperty("up").GetBoolean()),
                Patience,
                () => "n3 joined again and seen up");
            using var after = await cluster.PutDocumentAsync("n1", own, ClusterApi.Order(5, a: true));
            Assert.True(after.IsSuccessStatusCode, await after.Content.ReadAsStringAsync());
            using var read = await cluster.Http.GetAsync(new Uri(cluster.Url("n2"), "docs/" + own));
            Assert.Equal(ClusterApi.Order(5, a: true), await read.Content.ReadAsStringAsync());
        }
    }

    /// <summary>An id whose bucket <paramref name="node"/> owns.</summary>
    internal static string IdOwnedBy(string node, string prefix) =>
        Enumerable.Range(0, 1000).Select(i => $"orders/{prefix}-{i}").First(id => Map.OwnerOf(id) == node);

    // Loads count orders and defines V1, waiting until generation 1 is active and ready on every shard.
    private static async Task LoadAndDefineAsync(ClusterNodes cluster, int count)
    {
        var (status, body) = await cluster.BulkAsync("n1", Enumerable.Range(0, count).Select(i => ($"orders/{i}", ClusterApi.Order(i, a: i % 2 == 0))));
        Assert.True(status == HttpStatusCode.OK, body);
        Assert.Equal(count, JsonDocument.Parse(body).RootElement.GetProperty("stored").GetInt64());
        Assert.Equal(HttpStatusCode.Created, (await cluster.DefineAsync("n1", ClusterApi.V1)).Status);
        await cluster.WaitForActiveAsync("n1", 1, Patience);
    }

    // One relay per etcd member: a node given Endpoints reaches etcd only through them.
    private sealed class RelaySet : IDisposable
    {
        private readonly TcpRelay[] _relays;

        public RelaySet(EtcdCluster etcd)
        {
            _relays = [.. Enumerable.Range(0, EtcdCluster.Size).Select(i => new TcpRelay(new Uri(etcd.ClientUrl(i))))];
        }

        public string Endpoints => string.Join(',', _relays.Select(r => r.Url));

        public void Cut()
        {
            foreach (var relay in _relays)
            {
                relay.Cut();
            }
        }

        public void Restore()
        {
            foreach (var relay in _relays)
            {
                relay.Restore();
            }
        }

        public void Dispose()
        {
            foreach (var relay in _relays)
            {
                relay.Dispose();
            }
        }
    }
}
