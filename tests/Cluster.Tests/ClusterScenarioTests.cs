using System.Collections.Concurrent;
using System.Net;
using System.Text.Json;
using Etcdserverpb;
using Google.Protobuf;
using Xunit.Abstractions;

namespace Indexing.Cluster.Tests;

/// <summary>
/// The cluster end to end, as real processes: three etcd members, three nodes. A definition changes
/// while writers and queriers run and a node is killed mid-rebuild and started again.
/// </summary>
[Collection(ClusterProcesses.Name)]
public sealed class ClusterScenarioTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(120);

    [Fact]
    public async Task DefinitionChange_UnderWritesQueriesAndANodeKill_SwitchesEveryShardInOneTransaction()
    {
        await using var etcd = await EtcdCluster.StartAsync();
        await using var cluster = await ClusterNodes.StartAsync(etcd.Endpoints, 16, "n1", "n2", "n3");

        // 30,000 orders, about 10,000 a shard: a shard's rebuild takes seconds, far longer than the kill below.
        const int Loaded = 30_000;
        var (status, body) = await cluster.BulkAsync("n1", Enumerable.Range(0, Loaded).Select(i => ($"orders/{i}", ClusterApi.Order(i, a: i % 2 == 0))));
        Assert.True(status == HttpStatusCode.OK, body);
        Assert.Equal(Loaded, JsonDocument.Parse(body).RootElement.GetProperty("stored").GetInt64());
        Assert.Equal(HttpStatusCode.Created, (await cluster.DefineAsync("n2", ClusterApi.V1)).Status);
        await cluster.WaitForActiveAsync("n1", 1, Patience);

        using var stop = new CancellationTokenSource();
        var acknowledged = new ConcurrentDictionary<string, string>();
        var answers = new ConcurrentBag<(int Generation, bool Partial, string[] Violations)>();
        var writers = Enumerable.Range(0, 2).Select(w => Task.Run(() => WriteAsync(cluster, w, acknowledged, stop.Token))).ToArray();
        var queriers = Enumerable.Range(0, 2).Select(q => Task.Run(() => QueryAsync(cluster, q, answers, stop.Token))).ToArray();
        await Task.Delay(500);

        var clock = System.Diagnostics.Stopwatch.StartNew();
        var (changed, changedBody) = await cluster.DefineAsync("n1", ClusterApi.V2);
        Assert.True(changed == HttpStatusCode.Accepted, changedBody);
        // n3 is killed as soon as it has started building generation 2, long before it can finish.
        await ClusterNodes.WaitUntilAsync(
            async () => Shard(await cluster.IndexAsync("n1"), "n3") is { } n3 && n3.GetProperty("generation").GetInt32() == 2 && n3.GetProperty("phase").GetString() != "NotReported",
            Patience,
            () => "n3 reporting its build of generation 2");
        cluster.Kill("n3");
        var killedAt = clock.Elapsed;
        var atKill = Shard(await cluster.IndexAsync("n1"), "n3")!.Value;
        Assert.False(atKill.GetProperty("ready").GetBoolean(), $"n3 had finished generation 2 before the kill: {atKill}");

        // The switch waits for the killed shard: generation 1 stays active while n3 is down.
        for (var i = 0; i < 20; i++)
        {
            var seen = await cluster.IndexAsync("n2");
            Assert.Equal(1, seen.GetProperty("activeGeneration").GetInt32());
            Assert.Equal(2, seen.GetProperty("pendingGeneration").GetInt32());
            await Task.Delay(100);
        }

        var restartedAt = clock.Elapsed;
        await cluster.StartNodeAsync("n3");
        await cluster.WaitForActiveAsync("n1", 2, Patience);
        var switchedAt = clock.Elapsed;
        // Answers keep coming from generation 2 for a while, on every node.
        await Task.Delay(1500);
        await stop.CancelAsync();
        await Task.WhenAll(writers.Concat(queriers));

        // Every answer came from one generation: its hits all follow that generation's definition.
        Assert.All(answers, answer => Assert.True(answer.Violations.Length == 0, $"an answer of generation {answer.Generation} holds hits of the other: {string.Join("; ", answer.Violations)}"));
        Assert.Contains(answers, a => a.Generation == 1);
        Assert.Contains(answers, a => a.Generation == 2);
        output.WriteLine(
            $"definition changed at 0 s; n3 killed at {killedAt.TotalSeconds:0.0} s, restarted at {restartedAt.TotalSeconds:0.0} s; " +
            $"generation 2 active and ready everywhere at {switchedAt.TotalSeconds:0.0} s ({(switchedAt - restartedAt).TotalSeconds:0.0} s after the restart)");
        output.WriteLine(
            $"answers: {answers.Count(a => a.Generation == 1)} of generation 1, {answers.Count(a => a.Generation == 2)} of generation 2, " +
            $"{answers.Count(a => a.Partial)} partial; acknowledged writes: {acknowledged.Count}");

        // n3 resumed its build rather than losing it: its generation 2 is built and holds its documents.
        var n3Index = (await cluster.GetJsonAsync("n3", "shard/indexes/orders--g2")).GetProperty("status");
        Assert.Equal("following", n3Index.GetProperty("state").GetString());

        // Verify is clean on every shard, and no acknowledged write was lost through the kill.
        var lags = new long[3];
        await ClusterNodes.WaitUntilAsync(
            async () =>
            {
                for (var n = 0; n < 3; n++)
                {
                    lags[n] = (await cluster.GetJsonAsync($"n{n + 1}", "shard/indexes/orders--g2")).GetProperty("lagEtags").GetInt64();
                }

                return lags.All(lag => lag == 0);
            },
            Patience,
            () => $"every shard caught up with its store (lag in etags: {string.Join(", ", lags)})");
        var verify = await cluster.VerifyAsync("n2");
        Assert.True(verify.GetProperty("isConsistent").GetBoolean(), verify.ToString());
        Assert.Equal(2, verify.GetProperty("generation").GetInt32());
        Assert.NotEmpty(acknowledged);
        foreach (var (id, json) in acknowledged)
        {
            using var read = await cluster.Http.GetAsync(new Uri(cluster.Url("n2"), "docs/" + id));
            Assert.True(read.StatusCode == HttpStatusCode.OK, $"acknowledged write {id} reads {(int)read.StatusCode}");
            Assert.Equal(json, await read.Content.ReadAsStringAsync());
        }

        var all = await cluster.QueryAsync("n3", "q=*:*&take=1");
        Assert.Equal(HttpStatusCode.OK, all.Status);
        Assert.True(all.Body.GetProperty("totalHits").GetInt64() >= Loaded + acknowledged.Count, all.Body.ToString());

        await AssertSwitchedInOneTransactionAsync(etcd);
    }

    // The index's key changed from "1 active, 2 pending" to "2 active" in one revision, and at that
    // revision every shard's report said generation 2 ready: what the switch's compare held.
    private static async Task AssertSwitchedInOneTransactionAsync(EtcdCluster etcd)
    {
        using var client = etcd.Client();
        var now = await client.GetAsync(new RangeRequest { Key = ByteString.CopyFromUtf8("/indexing/indexes/orders") });
        var switchedAt = now.Kvs[0].ModRevision;
        var after = JsonDocument.Parse(now.Kvs[0].Value.ToStringUtf8()).RootElement;
        Assert.Equal(2, after.GetProperty("active").GetProperty("generation").GetInt32());
        Assert.Equal(JsonValueKind.Null, after.GetProperty("pending").ValueKind);

        var before = await client.GetAsync(new RangeRequest { Key = ByteString.CopyFromUtf8("/indexing/indexes/orders"), Revision = switchedAt - 1 });
        var previous = JsonDocument.Parse(before.Kvs[0].Value.ToStringUtf8()).RootElement;
        Assert.Equal(1, previous.GetProperty("active").GetProperty("generation").GetInt32());
        Assert.Equal(2, previous.GetProperty("pending").GetProperty("generation").GetInt32());

        var reports = await client.GetAsync(new RangeRequest
        {
            Key = ByteString.CopyFromUtf8("/indexing/progress/orders/"),
            RangeEnd = ByteString.CopyFromUtf8("/indexing/progress/orders0"),
            Revision = switchedAt,
        });
        Assert.Equal(3, reports.Kvs.Count);
        Assert.All(reports.Kvs, kv =>
        {
            var report = JsonDocument.Parse(kv.Value.ToStringUtf8()).RootElement;
            Assert.True(report.GetProperty("generation").GetInt32() == 2 && report.GetProperty("ready").GetBoolean(), $"at the switch's revision {switchedAt}: {report}");
        });
    }

    private static JsonElement? Shard(JsonElement index, string node) =>
        index.GetProperty("shards").EnumerateArray().Where(s => s.GetProperty("node").GetString() == node).Cast<JsonElement?>().FirstOrDefault();

    // Puts new orders through n1 and n2 (n3 is killed for a while); a 2xx is an acknowledged write.
    private static async Task WriteAsync(ClusterNodes cluster, int writer, ConcurrentDictionary<string, string> acknowledged, CancellationToken stop)
    {
        for (var i = 0; !stop.IsCancellationRequested; i++)
        {
            var id = $"orders/live-{writer}-{i}";
            var json = ClusterApi.Order(100_000 + i, a: i % 3 == 0);
            try
            {
                using var response = await cluster.PutDocumentAsync(i % 2 == 0 ? "n1" : "n2", id, json);
                if (response.IsSuccessStatusCode)
                {
                    acknowledged[id] = json;
                }
                else
                {
                    Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
                }
            }
            catch (HttpRequestException)
            {
                // Not acknowledged: it may or may not be stored, and nothing is claimed about it.
            }

            await Task.Delay(10, CancellationToken.None);
        }
    }

    // Asks status:a with the documents; under V1 each hit's status is "a", under V2 its state is.
    private static async Task QueryAsync(ClusterNodes cluster, int querier, ConcurrentBag<(int, bool, string[])> answers, CancellationToken stop)
    {
        for (var i = 0; !stop.IsCancellationRequested; i++)
        {
            var node = (querier + i) % 2 == 0 ? "n1" : "n2";
            HttpStatusCode status;
            JsonElement body;
            try
            {
                (status, body) = await cluster.QueryAsync(node, "q=status:a&include=docs&take=200&partial=true");
            }
            catch (HttpRequestException)
            {
                // The answer broke off (a node killed while it was written): no answer to judge.
                continue;
            }

            if (status != HttpStatusCode.OK)
            {
                Assert.Equal(HttpStatusCode.ServiceUnavailable, status);
                continue;
            }

            var generation = body.GetProperty("generation").GetInt32();
            var property = generation == 1 ? "status" : "state";
            var violations = body.GetProperty("hits").EnumerateArray()
                .Where(h => h.GetProperty("document").ValueKind == JsonValueKind.Object && h.GetProperty("document").GetProperty(property).GetString() != "a")
                .Select(h => $"{h.GetProperty("id").GetString()} from {h.GetProperty("shard").GetString()}: {h.GetProperty("document")}")
                .ToArray();
            answers.Add((generation, body.GetProperty("partial").GetBoolean(), violations));
        }
    }
}

/// <summary>The tests that start etcd members and nodes run one at a time: the machine has 2 cores.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ClusterProcesses
{
    public const string Name = "cluster processes";
}
