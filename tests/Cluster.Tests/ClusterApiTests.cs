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

        // A second process with a live node's id does not join: it waits out a restart's lease, then exits
        // saying why.
        using (var impostor = cluster.StartImpostor("n2"))
        {
            Assert.Equal(2, await impostor.WaitForExitAsync(ClusterNodes.StartTimeout));
            Assert.Contains("is held by a live member", impostor.Output, StringComparison.Ordinal);
        }

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
        await AdminPageShowsTheClusterAsync(cluster, Count);
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

        // Generation numbers only grow: a cancelled pending generation's number is never given again,
        // so no shard can take a build of one definition for another's.
        Assert.Equal(4, JsonDocument.Parse((await cluster.DefineAsync("n1", ClusterApi.V1)).Body).RootElement.GetProperty("pendingGeneration").GetInt32());
        var cancelled = JsonDocument.Parse((await cluster.DefineAsync("n2", ClusterApi.V3)).Body).RootElement;
        Assert.Equal("RebuildCancelled", cancelled.GetProperty("result").GetString());
        Assert.Equal(JsonValueKind.Null, cancelled.GetProperty("pendingGeneration").ValueKind);
        Assert.Equal(5, JsonDocument.Parse((await cluster.DefineAsync("n3", ClusterApi.V2)).Body).RootElement.GetProperty("pendingGeneration").GetInt32());
        await cluster.WaitForActiveAsync("n1", 5, Patience);

        // The shard endpoints: a document only on its owner, index changes only through the cluster,
        // whatever the path's case.
        var notOwned = ClusterFaultTests.IdOwnedBy("n1", "misrouted");
        using (var misrouted = await cluster.Http.PutAsync(new Uri(cluster.Url("n2"), "shard/docs/" + notOwned), new StringContent(ClusterApi.Order(1, a: true), System.Text.Encoding.UTF8, "application/json")))
        {
            var detail = await misrouted.Content.ReadAsStringAsync();
            Assert.True(misrouted.StatusCode == HttpStatusCode.Conflict, detail);
            Assert.Contains("'n1'", detail, StringComparison.Ordinal);
        }

        var hashBefore = (await cluster.GetJsonAsync("n3", "shard/indexes/orders--g5")).GetProperty("definitionHash").GetString();
        foreach (var path in new[] { "shard/indexes/orders--g5", "SHARD/INDEXES/orders--g5", "Shard/Indexes/orders--g5" })
        {
            using var redefine = await cluster.Http.PutAsync(new Uri(cluster.Url("n3"), path), new StringContent(ClusterApi.V1.Replace("\"orders\", \"collection", "\"orders--g5\", \"collection", StringComparison.Ordinal), System.Text.Encoding.UTF8, "application/json"));
            Assert.True(redefine.StatusCode == HttpStatusCode.Conflict, $"PUT {path}: {(int)redefine.StatusCode}");
            using var delete = await cluster.Http.DeleteAsync(new Uri(cluster.Url("n3"), path));
            Assert.True(delete.StatusCode == HttpStatusCode.Conflict, $"DELETE {path}: {(int)delete.StatusCode}");
        }

        Assert.Equal(hashBefore, (await cluster.GetJsonAsync("n3", "shard/indexes/orders--g5")).GetProperty("definitionHash").GetString());

        // A forwarded write is judged here as on the owner: too large is 413 (the nodes run with a 1 MiB
        // limit), a content type with a trailing ';' is JSON.
        // The node answers before it reads the body, and Kestrel then closes the connection: this
        // request asks for that, so the client's pool does not hand the closing connection to the next.
        using (var tooLargeRequest = new HttpRequestMessage(HttpMethod.Put, new Uri(cluster.Url("n1"), "docs/" + ClusterFaultTests.IdOwnedBy("n2", "large")))
        {
            Content = new StringContent($$"""{"text": "{{new string('x', 2 << 20)}}"}""", System.Text.Encoding.UTF8, "application/json"),
            Headers = { ConnectionClose = true },
        })
        using (var tooLarge = await cluster.Http.SendAsync(tooLargeRequest))
        {
            var detail = await tooLarge.Content.ReadAsStringAsync();
            Assert.True(tooLarge.StatusCode == HttpStatusCode.RequestEntityTooLarge, detail);
            Assert.Contains("Storage:MaxDocumentBytes", detail, StringComparison.Ordinal);
        }

        using (var semicolon = new StringContent(ClusterApi.Order(7, a: true)))
        {
            semicolon.Headers.Remove("Content-Type");
            semicolon.Headers.TryAddWithoutValidation("Content-Type", "application/json;");
            using var created = await cluster.Http.PutAsync(new Uri(cluster.Url("n1"), "docs/" + ClusterFaultTests.IdOwnedBy("n3", "semicolon")), semicolon);
            Assert.True(created.StatusCode == HttpStatusCode.Created, await created.Content.ReadAsStringAsync());
        }

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
        Assert.Equal(Count + 1 - n2Documents - (Map.OwnerOf(ClusterFaultTests.IdOwnedBy("n3", "semicolon")) == "n2" ? 1 : 0), partialBody.GetProperty("totalHits").GetInt64());

        var owned = ClusterFaultTests.IdOwnedBy("n2", "down");
        using var put = await cluster.PutDocumentAsync("n1", owned, ClusterApi.Order(1, a: true));
        var putDetail = await put.Content.ReadAsStringAsync();
        Assert.True(put.StatusCode == HttpStatusCode.ServiceUnavailable, putDetail);
        Assert.Contains("'n2'", putDetail, StringComparison.Ordinal);
        var (bulk, bulkBody) = await cluster.BulkAsync("n3", [(ClusterFaultTests.IdOwnedBy("n1", "bulk"), ClusterApi.Order(1, a: true)), (owned, ClusterApi.Order(2, a: true))]);
        Assert.True(bulk == HttpStatusCode.ServiceUnavailable, bulkBody);
        Assert.Contains("'n2'", bulkBody, StringComparison.Ordinal);
    }

    // The admin page's Cluster section, in a real browser: the three nodes up, and the index's
    // generation with each shard's report (ready, and its share of the documents).
    private static async Task AdminPageShowsTheClusterAsync(ClusterNodes cluster, int count)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        await using var browser = await Indexing.Server.Tests.HeadlessChromium.StartAsync(1200, 900, timeout.Token);
        await browser.SendAsync("Page.navigate", new System.Text.Json.Nodes.JsonObject { ["url"] = new Uri(cluster.Url("n1"), "admin").ToString() }, timeout.Token);
        const string Shown = """
            (() => {
              const section = document.getElementById("cluster");
              if (!section || section.hidden) return null;
              const rows = [...section.querySelectorAll(".cluster-index tbody tr")].map(r => [...r.cells].map(c => c.textContent));
              if (rows.length === 0) return null;
              return JSON.stringify({
                nodes: [...section.querySelectorAll("#cluster-nodes tbody tr")].map(r => [...r.cells].map(c => c.textContent)),
                title: section.querySelector(".cluster-index h3").textContent,
                shards: rows,
              });
            })()
            """;
        string? state = null;
        while ((state = (string?)await browser.EvaluateAsync(Shown, timeout.Token)) is null)
        {
            await Task.Delay(250, timeout.Token);
        }

        var page = JsonDocument.Parse(state).RootElement;
        Assert.Equal(["n1", "n2", "n3"], page.GetProperty("nodes").EnumerateArray().Select(n => n[0].GetString()));
        Assert.All(page.GetProperty("nodes").EnumerateArray(), n => Assert.Equal("up", n[1].GetString()));
        Assert.Equal("orders: generation 1", page.GetProperty("title").GetString());
        var shards = page.GetProperty("shards").EnumerateArray().ToList();
        Assert.Equal(3, shards.Count);
        Assert.All(shards, s => Assert.Equal("yes", s[4].GetString()));
        Assert.Equal(count, shards.Sum(s => long.Parse(s[5].GetString()!.Split(" of ")[0].Replace(",", "", StringComparison.Ordinal), System.Globalization.CultureInfo.InvariantCulture)));
    }
}
