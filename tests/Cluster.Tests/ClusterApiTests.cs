using System.Net;
using System.Text.Json;

namespace Indexing.Cluster.Tests;

/// <summary>
/// The cluster's HTTP API on three real nodes: documents routed to their owners, a bulk load split by
/// owner, sorted paging across shards, a definition changed twice mid-rebuild, and a node down.
/// </summary>
[Collection(ClusterProcesses.Name)]
public sealed class ClusterApiTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(90);
    private static readonly ShardMap Map = ShardMap.RoundRobin(["n1", "n2", "n3"], 16);

    [Fact]
    public async Task Documents_QueriesAndRedefinitions_AcrossShards_ThenANodeDown()
    {
        await using var etcd = await EtcdCluster.StartAsync();
        await using var cluster = await ClusterNodes.StartAsync(etcd.Endpoints, 16, "n1", "n2", "n3");

        // A bulk load through one node lands on the owners, and only there.
        const int Count = 200;
        var (status, body) = await cluster.BulkAsync("n2", Enumerable.Range(0, Count).Select(i => ($"orders/{i}", ClusterApi.Order(1000 - i, a: i % 2 == 0))));
        Assert.True(status == HttpStatusCode.OK, body);
        Assert.Equal(Count, JsonDocument.Parse(body).RootElement.GetProperty("stored").GetInt64());
        foreach (var i in new[] { 0, 1, 2, 3, 57, 199 })
        {
            var id = $"orders/{i}";
            foreach (var node in Map.Nodes)
            {
                using var routed = await cluster.Http.GetAsync(new Uri(cluster.Url(node), "docs/" + id));
                Assert.Equal(HttpStatusCode.OK, routed.StatusCode);
                Assert.Equal(ClusterApi.Order(1000 - i, a: i % 2 == 0), await routed.Content.ReadAsStringAsync());
                using var local = await cluster.Http.GetAsync(new Uri(cluster.Url(node), "shard/docs/" + id));
                Assert.Equal(node == Map.OwnerOf(id) ? HttpStatusCode.OK : HttpStatusCode.NotFound, local.StatusCode);
            }
        }

        // Sorted pages across shards: every page of 7 by total ascending is the next 7 of all orders.
        Assert.Equal(HttpStatusCode.Created, (await cluster.DefineAsync("n3", ClusterApi.V1)).Status);
        await cluster.WaitForActiveAsync("n1", 1, Patience);
        var paged = new List<string>();
        for (var skip = 0; skip < Count; skip += 7)
        {
            var (pageStatus, page) = await cluster.QueryAsync($"n{(skip % 3) + 1}", $"q=*:*&sort=total&skip={skip}&take=7");
            Assert.True(pageStatus == HttpStatusCode.OK, page.ToString());
            Assert.Equal(Count, page.GetProperty("totalHits").GetInt64());
            paged.AddRange(page.GetProperty("hits").EnumerateArray().Select(h => h.GetProperty("id").GetString()!));
        }

        Assert.Equal(Enumerable.Range(0, Count).Reverse().Select(i => $"orders/{i}"), paged);
        var (tooDeep, deep) = await cluster.QueryAsync("n1", "q=*:*&skip=9995&take=10");
        Assert.True(tooDeep == HttpStatusCode.BadRequest, deep.ToString());

        // A definition changed again mid-rebuild replaces the first rebuild: each shard drops it.
        var (second, secondBody) = await cluster.DefineAsync("n1", ClusterApi.V2);
        Assert.True(second == HttpStatusCode.Accepted, secondBody);
        var (third, thirdBody) = await cluster.DefineAsync("n2", ClusterApi.V3);
        Assert.True(third == HttpStatusCode.Accepted, thirdBody);
        Assert.Equal("RebuildReplaced", JsonDocument.Parse(thirdBody).RootElement.GetProperty("result").GetString());
        await cluster.WaitForActiveAsync("n3", 3, Patience);
        await ClusterNodes.WaitUntilAsync(
            async () =>
            {
                foreach (var node in Map.Nodes)
                {
                    if (!(await cluster.LocalIndexesAsync(node)).SequenceEqual(["orders--g3"]))
                    {
                        return false;
                    }
                }

                return true;
            },
            Patience,
            () => "every shard holding generation 3 only (2 cancelled, 1 retired after its grace)");
        var verify = await cluster.VerifyAsync("n1");
        Assert.True(verify.GetProperty("isConsistent").GetBoolean(), verify.ToString());
        Assert.Equal(3, verify.GetProperty("generation").GetInt32());

        // A node down: queries answer 503 naming it, or flagged partial; its documents answer 503 naming it.
        cluster.Kill("n2");
        var n2Documents = Enumerable.Range(0, Count).Count(i => Map.OwnerOf($"orders/{i}") == "n2");
        await ClusterNodes.WaitUntilAsync(
            async () => (await cluster.GetJsonAsync("n1", "cluster")).GetProperty("nodes").EnumerateArray().Any(n => n.GetProperty("node").GetString() == "n2" && !n.GetProperty("up").GetBoolean()),
            TimeSpan.FromSeconds(20),
            () => "n1 seeing n2 down");
        var (whole, wholeBody) = await cluster.QueryAsync("n1", "q=*:*&take=5");
        Assert.True(whole == HttpStatusCode.ServiceUnavailable, wholeBody.ToString());
        Assert.Contains("'n2'", wholeBody.GetProperty("detail").GetString(), StringComparison.Ordinal);
        var (partial, partialBody) = await cluster.QueryAsync("n3", "q=*:*&take=5&partial=true");
        Assert.True(partial == HttpStatusCode.OK, partialBody.ToString());
        Assert.True(partialBody.GetProperty("partial").GetBoolean());
        Assert.Equal(["n2"], partialBody.GetProperty("missingShards").EnumerateArray().Select(n => n.GetString()));
        Assert.Equal(Count - n2Documents, partialBody.GetProperty("totalHits").GetInt64());

        var owned = ClusterFaultTests.IdOwnedBy("n2", "down");
        using var put = await cluster.PutDocumentAsync("n1", owned, ClusterApi.Order(1, a: true));
        var putDetail = await put.Content.ReadAsStringAsync();
        Assert.True(put.StatusCode == HttpStatusCode.ServiceUnavailable, putDetail);
        Assert.Contains("'n2'", putDetail, StringComparison.Ordinal);
        var (bulk, bulkBody) = await cluster.BulkAsync("n3", [(ClusterFaultTests.IdOwnedBy("n1", "bulk"), ClusterApi.Order(1, a: true)), (owned, ClusterApi.Order(2, a: true))]);
        Assert.True(bulk == HttpStatusCode.ServiceUnavailable, bulkBody);
        Assert.Contains("'n2'", bulkBody, StringComparison.Ordinal);
    }
}
