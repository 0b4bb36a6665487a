using System.Diagnostics;
using dotnet_etcd;
using Etcdserverpb;
using Google.Protobuf;
using Grpc.Core;
using Mvccpb;
using Xunit.Abstractions;

namespace Indexing.Cluster.Tests;

/// <summary>
/// What the node code may rely on from etcd 3.4 and dotnet-etcd 10.0.0, pinned against three real
/// members: a member lost, quorum lost, leases across both, and a node cut off from etcd.
/// </summary>
[Collection(ClusterProcesses.Name)]
public sealed class EtcdFaultTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Healthy = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task PutAndGet_ThroughAllThreeEndpoints_AndEveryMemberServesTheValue()
    {
        var start = Stopwatch.StartNew();
        await using var cluster = await EtcdCluster.StartAsync(Healthy);
        Log($"cluster started and healthy in {start.ElapsedMilliseconds} ms");
        using var client = cluster.Client();

        var put = await Time("put over all endpoints", () => client.PutAsync("/t/a", "1", deadline: In(5)));
        Assert.True(put.Succeeded, put.ToString());
        var get = await Time("get over all endpoints", () => client.GetAsync("/t/a", deadline: In(5)));
        Assert.Equal("1", Assert.Single(get.Result!.Kvs).Value.ToStringUtf8());
        Assert.Equal(put.Result!.Header.Revision, get.Result.Kvs[0].ModRevision);

        // Each member alone serves the committed value to a linearizable read, and is the member it names.
        var members = new HashSet<ulong>();
        for (var i = 0; i < EtcdCluster.Size; i++)
        {
            using var one = cluster.MemberClient(i);
            var read = await Time($"linearizable get from e{i + 1} alone", () => one.GetAsync("/t/a", deadline: In(5)));
            Assert.Equal("1", Assert.Single(read.Result!.Kvs).Value.ToStringUtf8());
            members.Add(read.Result.Header.MemberId);
        }

        Assert.Equal(EtcdCluster.Size, members.Count);

        // Which members a client over all endpoints reaches, call after call (round robin).
        var served = new List<ulong>();
        for (var i = 0; i < 9; i++)
        {
            served.Add((await client.GetAsync("/t/a", deadline: In(5))).Header.MemberId);
        }

        Log($"9 gets over all endpoints were served by {served.Distinct().Count()} members: {string.Join(' ', served.Select(m => $"e{MemberNumber(members, m)}"))}");
    }

    [Fact]
    public async Task OneMemberKilled_PutsAndACompareAndSwapTxnSucceed_ALeadersKillStallsCallsUntilTheirDeadline()
    {
        await using var cluster = await EtcdCluster.StartAsync(Healthy);
        using var client = cluster.Client();
        await WarmAsync(client);
        var leader = await cluster.LeaderIndexAsync(Healthy);
        var follower = (leader + 1) % EtcdCluster.Size;

        // A follower killed: the client leaves its connection and the next call goes through, no retry of ours.
        cluster.KillMember(follower);
        for (var i = 0; i < 4; i++)
        {
            var put = await Time($"put {i + 1} after killing follower e{follower + 1}", () => client.PutAsync("/t/b", "1", deadline: In(10)));
            Assert.True(put.Succeeded, put.ToString());
        }

        var clock = Stopwatch.StartNew();
        cluster.StartMember(follower);
        await cluster.WaitHealthyAsync(Healthy);
        Log($"e{follower + 1} restarted and the cluster healthy in {clock.ElapsedMilliseconds} ms");
        await WarmAsync(client);

        // The leader killed: a follower forwards a proposal to the dead leader and it is lost, so the
        // call waits out its deadline (etcd itself gives up after 5 s + 2 election timeouts = 7 s).
        cluster.KillMember(leader);
        clock.Restart();
        var election = WaitForNewLeaderAsync(cluster, leader, clock);
        var first = await Time($"first put after killing leader e{leader + 1}, 2 s deadline", () => client.PutAsync("/t/b", "2", deadline: In(2)));
        Assert.Equal(StatusCode.DeadlineExceeded, first.RpcError().StatusCode);
        Assert.NotEqual(leader, await election);

        // Retried by us with the same deadline, the put goes through once the election is over.
        Timed<PutResponse> retried;
        var attempts = 1;
        do
        {
            attempts++;
            retried = await Time($"put attempt {attempts} after killing the leader, 2 s deadline", () => client.PutAsync("/t/b", "2", deadline: In(2)));
        }
        while (!retried.Succeeded && clock.Elapsed < TimeSpan.FromSeconds(15));

        Assert.True(retried.Succeeded, $"{retried}\n{cluster.Output}");
        Log($"the put went through {clock.ElapsedMilliseconds} ms after the leader's kill, attempt {attempts}");

        // Compare-and-swap on the mod revision: the current revision wins, a stale one loses.
        var current = (await client.GetAsync("/t/b", deadline: In(10))).Kvs[0];
        Assert.Equal("2", current.Value.ToStringUtf8());
        var swap = await Time("txn with the current mod revision", () => client.TransactionAsync(SwapIf("/t/b", current.ModRevision, "3"), deadline: In(10)));
        Assert.True(swap.Result!.Succeeded, swap.ToString());
        var stale = await Time("txn with a stale mod revision", () => client.TransactionAsync(SwapIf("/t/b", current.ModRevision, "4"), deadline: In(10)));
        Assert.False(stale.Result!.Succeeded, stale.ToString());
        Assert.Equal("3", (await client.GetAsync("/t/b", deadline: In(10))).Kvs[0].Value.ToStringUtf8());

        // The old leader comes back on its data directory and catches up.
        clock.Restart();
        cluster.StartMember(leader);
        await cluster.WaitHealthyAsync(Healthy);
        await EventuallyAsync(async () => (await SerializableGetAsync(cluster, leader, "/t/b"))?.Value.ToStringUtf8() == "3", cluster);
        Log($"e{leader + 1} restarted and caught up in {clock.ElapsedMilliseconds} ms");
    }

    [Fact]
    public async Task QuorumLost_WritesAndLinearizableReadsFail_TheSurvivorServesSerializableReads_AndReportsNoLeader()
    {
        await using var cluster = await EtcdCluster.StartAsync(Healthy);
        using var client = cluster.Client();
        await client.PutAsync("/t/c", "1", deadline: In(5));
        var leader = await cluster.LeaderIndexAsync(Healthy);
        var survivor = (leader + 1) % EtcdCluster.Size;
        await EventuallyAsync(async () => (await SerializableGetAsync(cluster, survivor, "/t/c"))?.Value.ToStringUtf8() == "1", cluster);
        var before = await cluster.StatusAsync(survivor, In(5));
        Log($"survivor e{survivor + 1} before: leader {before.Leader:x}, term {before.RaftTerm}, raft index {before.RaftIndex}");

        // Kill the leader and the other follower: one member of three is left, a follower.
        var clock = Stopwatch.StartNew();
        for (var i = 0; i < EtcdCluster.Size; i++)
        {
            if (i != survivor)
            {
                cluster.KillMember(i);
            }
        }

        // The survivor's own Status says it has no leader (0) once its election timeout has run out.
        var noLeader = Task.Run(async () =>
        {
            while (true)
            {
                try
                {
                    var status = await cluster.StatusAsync(survivor, In(1));
                    if (status.Leader == 0)
                    {
                        Log($"survivor's Status: leader 0 seen {clock.ElapsedMilliseconds} ms after the kills; term {status.RaftTerm}, raft index {status.RaftIndex}");
                        return status;
                    }
                }
                catch (RpcException)
                {
                    // Ask again.
                }

                await Task.Delay(50);
            }
        });

        var put = await Time("put over all endpoints, 2 s deadline, quorum lost", () => client.PutAsync("/t/c", "2", deadline: In(2)));
        Assert.Equal(StatusCode.DeadlineExceeded, put.RpcError().StatusCode);
        Assert.InRange(put.Elapsed, TimeSpan.FromSeconds(1.5), TimeSpan.FromSeconds(10));

        // It fails: by its deadline on the survivor, or at once, Unavailable, when round robin picks a
        // dead member's connection.
        var linearizable = await Time("linearizable get over all endpoints, 2 s deadline, quorum lost", () => client.GetAsync("/t/c", deadline: In(2)));
        Assert.Contains(linearizable.RpcError().StatusCode, new[] { StatusCode.DeadlineExceeded, StatusCode.Unavailable });

        // Over all endpoints, round robin still picks a dead member's connection until a call fails on
        // it: a call answers from the survivor, or fails fast, Unavailable, when the client's retries
        // did not move it to the survivor (they are throttled after a few failures).
        var serializable = await Time("serializable get over all endpoints, quorum lost", () => client.GetAsync(Serializable("/t/c"), deadline: In(2)));
        Assert.True(
            serializable.Error is RpcException { StatusCode: StatusCode.Unavailable } || serializable.Result?.Kvs.Single().Value.ToStringUtf8() == "1",
            serializable.ToString());

        var status = await noLeader.WaitAsync(Healthy);
        Assert.Equal(0UL, status.Leader);
        var overAll = await Time("Status over all endpoints, quorum lost", () => client.StatusAsync(new StatusRequest(), deadline: In(2)));
        Assert.True(
            overAll.Error is RpcException { StatusCode: StatusCode.Unavailable } || overAll.Result?.Leader == 0,
            overAll.ToString());

        using (var alone = cluster.MemberClient(survivor))
        {
            var fromSurvivor = await Time("serializable get from the survivor alone", () => alone.GetAsync(Serializable("/t/c"), deadline: In(2)));
            Assert.Equal("1", Assert.Single(fromSurvivor.Result!.Kvs).Value.ToStringUtf8());

            // With a deadline past etcd's own request timeout (5 s + 2 election timeouts), etcd answers
            // first, with gRPC's Unknown: a status the client's retry policy does not retry.
            var longPut = await Time("put to the survivor alone, 10 s deadline, quorum lost", () => alone.PutAsync("/t/c", "2", deadline: In(10)));
            Assert.Equal(StatusCode.Unknown, longPut.RpcError().StatusCode);
            Assert.Contains("deadline exceeded", longPut.RpcError().Status.Detail, StringComparison.Ordinal);
        }

        // Quorum back: the same client writes again. Whether a failed put was applied is logged, not
        // pinned: a put that timed out is indeterminate to the caller.
        clock.Restart();
        for (var i = 0; i < EtcdCluster.Size; i++)
        {
            if (i != survivor)
            {
                cluster.StartMember(i);
            }
        }

        await cluster.WaitHealthyAsync(Healthy);
        Log($"quorum back and healthy {clock.ElapsedMilliseconds} ms after the restarts");
        var value = (await client.GetAsync("/t/c", deadline: In(5))).Kvs[0].Value.ToStringUtf8();
        Log($"after the restore /t/c = {value} (the failed puts wrote 2)");
        var again = await Time("put with the same client after the restore", () => client.PutAsync("/t/c", "3", deadline: In(5)));
        Assert.True(again.Succeeded, again.ToString());
    }

    [Fact]
    public async Task Lease_RenewedOnceACall_OutlivesItsTtl_ExpiresWithoutRenewal_AndRenewingItThenAnswersTtlZero()
    {
        await using var cluster = await EtcdCluster.StartAsync(Healthy);
        using var client = cluster.Client();
        var grant = await Time("lease grant TTL 3", () => client.LeaseGrantAsync(new LeaseGrantRequest { TTL = 3 }, deadline: In(5)));
        Assert.Equal(3, grant.Result!.TTL);
        var lease = grant.Result.ID;
        await client.PutAsync(new PutRequest { Key = Bytes("/t/d"), Value = Bytes("node"), Lease = lease }, deadline: In(5));

        // Renewed every second for twice the TTL: the key stays.
        var renewed = Stopwatch.StartNew();
        while (renewed.Elapsed < TimeSpan.FromSeconds(6))
        {
            var ttl = await Time("keep-alive once (raw stream, 2 s deadline)", () => EtcdLease.KeepAliveOnceAsync(client, lease, In(2)));
            Assert.Equal(3, ttl.Result);
            await Task.Delay(1000);
        }

        // The library's own one-request overload: one response to the callback, then the call ends.
        var answers = new List<long>();
        using (var stop = new CancellationTokenSource(TimeSpan.FromSeconds(5)))
        {
            var callback = await Time("LeaseKeepAlive(request, callback, token)", async () =>
            {
                await client.LeaseKeepAlive(new LeaseKeepAliveRequest { ID = lease }, r => answers.Add(r.TTL), stop.Token);
                return 0;
            });
            Assert.True(callback.Succeeded, callback.ToString());
        }

        Assert.Equal([3L], answers);
        Assert.Single((await client.GetAsync("/t/d", deadline: In(5))).Kvs);

        // No more renewals: the key goes with the lease, about one TTL after the last renewal.
        var unrenewed = Stopwatch.StartNew();
        await EventuallyAsync(async () => (await client.GetAsync("/t/d", deadline: In(2))).Count == 0, cluster, TimeSpan.FromSeconds(15));
        Log($"key gone {unrenewed.ElapsedMilliseconds} ms after the last renewal");
        Assert.True(unrenewed.Elapsed > TimeSpan.FromSeconds(1), $"gone after {unrenewed.Elapsed}, before the lease could expire");

        // The expired lease: a renewal answers TTL 0 (no exception), TimeToLive answers -1, a put with it fails.
        var expired = await Time("keep-alive once of the expired lease", () => EtcdLease.KeepAliveOnceAsync(client, lease, In(2)));
        Assert.Equal(0, expired.Result);
        answers.Clear();
        using (var stop = new CancellationTokenSource(TimeSpan.FromSeconds(5)))
        {
            await client.LeaseKeepAlive(new LeaseKeepAliveRequest { ID = lease }, r => answers.Add(r.TTL), stop.Token);
        }

        Assert.Equal([0L], answers);
        var timeToLive = await Time("TimeToLive of the expired lease", () => client.LeaseTimeToLiveAsync(new LeaseTimeToLiveRequest { ID = lease }, deadline: In(2)));
        Assert.Equal(-1, timeToLive.Result!.TTL);
        var putWithIt = await Time("put with the expired lease", () => client.PutAsync(new PutRequest { Key = Bytes("/t/d"), Value = Bytes("node"), Lease = lease }, deadline: In(2)));
        Assert.Equal(StatusCode.NotFound, putWithIt.RpcError().StatusCode);
    }

    [Fact]
    public async Task Lease_SurvivesAQuorumLossLongerThanItsTtl_NewLeaderRefreshesIt()
    {
        await using var cluster = await EtcdCluster.StartAsync(Healthy);
        using var client = cluster.Client();
        var lease = (await client.LeaseGrantAsync(new LeaseGrantRequest { TTL = 3 }, deadline: In(5))).ID;
        await client.PutAsync(new PutRequest { Key = Bytes("/t/e"), Value = Bytes("node"), Lease = lease }, deadline: In(5));
        var leader = await cluster.LeaderIndexAsync(Healthy);
        var survivor = (leader + 1) % EtcdCluster.Size;
        Assert.Equal(3, await EtcdLease.KeepAliveOnceAsync(client, lease, In(5)));

        var lost = Stopwatch.StartNew();
        for (var i = 0; i < EtcdCluster.Size; i++)
        {
            if (i != survivor)
            {
                cluster.KillMember(i);
            }
        }

        // Renewing while quorum is lost fails; it does not answer TTL 0.
        // The stream's deadline surfaces as RpcException DeadlineExceeded or as a cancellation.
        var renewal = await Time("keep-alive once (raw stream, 2 s deadline), quorum lost", () => EtcdLease.KeepAliveOnceAsync(client, lease, In(2)));
        Assert.True(
            renewal.Error is RpcException { StatusCode: StatusCode.DeadlineExceeded } or OperationCanceledException,
            renewal.ToString());
        using (var stop = new CancellationTokenSource(TimeSpan.FromSeconds(2)))
        {
            var callback = await Time("LeaseKeepAlive(request, callback, token cancelled after 2 s), quorum lost", async () =>
            {
                await client.LeaseKeepAlive(new LeaseKeepAliveRequest { ID = lease }, _ => { }, stop.Token);
                return 0;
            });
            Assert.True(
                callback.Error is RpcException { StatusCode: StatusCode.Cancelled } or OperationCanceledException,
                callback.ToString());
        }

        // Lost for twice the TTL, with no renewal at all.
        var wait = TimeSpan.FromSeconds(6) - lost.Elapsed;
        if (wait > TimeSpan.Zero)
        {
            await Task.Delay(wait);
        }

        var restore = Stopwatch.StartNew();
        for (var i = 0; i < EtcdCluster.Size; i++)
        {
            if (i != survivor)
            {
                cluster.StartMember(i);
            }
        }

        // Renewed as soon as etcd answers again (a node renews every third of its TTL): the new leader
        // restarted every lease's clock, so the renewal finds the lease alive, not expired (TTL 0).
        long ttl;
        while (true)
        {
            var attempt = await Time("keep-alive once after the restarts", () => EtcdLease.KeepAliveOnceAsync(client, lease, In(1)));
            if (attempt.Error is null)
            {
                ttl = attempt.Result;
                break;
            }

            Assert.True(restore.Elapsed < Healthy, $"no renewal answered within {Healthy} of the restarts: {attempt}");
            await Task.Delay(100);
        }

        Log($"quorum lost for {lost.ElapsedMilliseconds - restore.ElapsedMilliseconds} ms, renewed {restore.ElapsedMilliseconds} ms after the restarts: TTL {ttl}");
        Assert.Equal(3, ttl);
        await cluster.WaitHealthyAsync(Healthy);
        Assert.Single((await client.GetAsync("/t/e", deadline: In(5))).Kvs);
    }

    [Fact]
    public async Task CutOffThroughRelays_CallsFailByTheirDeadlineThenAtOnce_AndTheSameClientRecoversAfterRestore()
    {
        await using var cluster = await EtcdCluster.StartAsync(Healthy);
        var relays = Enumerable.Range(0, EtcdCluster.Size).Select(i => new TcpRelay(new Uri(cluster.ClientUrl(i)))).ToList();
        try
        {
            // One node's client reaches every member through its own relay; everyone else directly.
            using var client = new EtcdClient(string.Join(',', relays.Select(r => r.Url)));
            await WarmAsync(client);
            Assert.All(relays, r => Assert.True(r.Open > 0, "the client holds no connection through a relay"));

            relays.ForEach(r => r.Cut());
            var cut = Stopwatch.StartNew();
            // The first call spends its deadline in the client's retries (DeadlineExceeded), unless
            // their random backoffs run out all five attempts first (Unavailable).
            var first = await Time("first put after the cut, 2 s deadline", () => client.PutAsync("/t/f", "1", deadline: In(2)));
            Assert.Contains(first.RpcError().StatusCode, new[] { StatusCode.DeadlineExceeded, StatusCode.Unavailable });

            // Later calls fail fast, Unavailable: no connection to pick and retries throttled.
            var during = new List<Timed<PutResponse>>();
            while (cut.Elapsed < TimeSpan.FromSeconds(5))
            {
                await Task.Delay(500);
                during.Add(await Time($"put {cut.ElapsedMilliseconds} ms into the cut, 2 s deadline", () => client.PutAsync("/t/f", "1", deadline: In(2))));
            }

            Assert.All(during, d => Assert.Contains(d.RpcError().StatusCode, new[] { StatusCode.Unavailable, StatusCode.DeadlineExceeded }));
            var read = await Time("serializable get during the cut, 2 s deadline", () => client.GetAsync(Serializable("/t/f"), deadline: In(2)));
            Assert.Contains(read.RpcError().StatusCode, new[] { StatusCode.Unavailable, StatusCode.DeadlineExceeded });

            // The rest of the cluster never noticed.
            using (var direct = cluster.Client())
            {
                var put = await Time("put by a client not behind the relays", () => direct.PutAsync("/t/f", "0", deadline: In(5)));
                Assert.True(put.Succeeded, put.ToString());
            }

            var acceptedBefore = relays.Sum(r => r.Accepted);
            relays.ForEach(r => r.Restore());
            var restored = Stopwatch.StartNew();
            using (var fresh = new EtcdClient(string.Join(',', relays.Select(r => r.Url))))
            {
                var put = await Time("put by a new client right after the restore", () => fresh.PutAsync("/t/f", "1", deadline: In(5)));
                Assert.True(put.Succeeded, put.ToString());
            }

            // The same client comes back by itself, once its connections' reconnect backoff runs out.
            Timed<PutResponse> attempt;
            var attempts = 0;
            var failures = new List<string>();
            while (true)
            {
                attempts++;
                attempt = await Timed.RunAsync("put by the same client after the restore", () => client.PutAsync("/t/f", "2", deadline: In(2)));
                if (attempt.Succeeded || restored.Elapsed > TimeSpan.FromSeconds(15))
                {
                    break;
                }

                failures.Add(attempt.Outcome);
                await Task.Delay(200);
            }

            Log($"the same client failed {failures.Count} times after the restore: {string.Join(" | ", failures.Distinct())}");
            Assert.True(attempt.Succeeded, $"the cut-off client did not recover within 15 s of the restore: {attempt}\n{cluster.Output}");
            Log($"the same client wrote again {restored.ElapsedMilliseconds} ms after the restore, attempt {attempts}");
            Assert.True(relays.Sum(r => r.Accepted) > acceptedBefore, "the client wrote without a new connection through the relays");
        }
        finally
        {
            relays.ForEach(r => r.Dispose());
        }
    }

    private static ByteString Bytes(string text) => ByteString.CopyFromUtf8(text);

    private static RangeRequest Serializable(string key) => new() { Key = Bytes(key), Serializable = true };

    private static TxnRequest SwapIf(string key, long modRevision, string value) => new()
    {
        Compare =
        {
            new Compare
            {
                Key = Bytes(key),
                Target = Compare.Types.CompareTarget.Mod,
                Result = Compare.Types.CompareResult.Equal,
                ModRevision = modRevision,
            },
        },
        Success = { new RequestOp { RequestPut = new PutRequest { Key = Bytes(key), Value = Bytes(value) } } },
    };

    /// <summary>Gets through the client until it has served from every member once, so each has a connection.</summary>
    private static async Task WarmAsync(EtcdClient client)
    {
        var members = new HashSet<ulong>();
        for (var i = 0; i < 30 && members.Count < EtcdCluster.Size; i++)
        {
            members.Add((await client.GetAsync("/t/warm", deadline: In(5))).Header.MemberId);
        }

        Assert.Equal(EtcdCluster.Size, members.Count);
    }

    /// <summary>The index of the member that becomes leader after <paramref name="killed"/>, logging when it was first seen.</summary>
    private async Task<int> WaitForNewLeaderAsync(EtcdCluster cluster, int killed, Stopwatch sinceKill)
    {
        while (sinceKill.Elapsed < Healthy)
        {
            for (var i = 0; i < EtcdCluster.Size; i++)
            {
                if (i == killed || !cluster.IsRunning(i))
                {
                    continue;
                }

                try
                {
                    var status = await cluster.StatusAsync(i, In(1));
                    if (status.Leader != 0 && status.Leader == status.Header.MemberId)
                    {
                        Log($"e{i + 1} is leader, seen {sinceKill.ElapsedMilliseconds} ms after the kill");
                        return i;
                    }
                }
                catch (RpcException)
                {
                    // Busy electing: ask again.
                }
            }

            await Task.Delay(50);
        }

        throw new TimeoutException($"no new leader within {Healthy}:\n{cluster.Output}");
    }

    private static async Task<KeyValue?> SerializableGetAsync(EtcdCluster cluster, int member, string key)
    {
        using var client = cluster.MemberClient(member);
        return (await client.GetAsync(Serializable(key), deadline: In(2))).Kvs.FirstOrDefault();
    }

    /// <summary>Polls <paramref name="condition"/> (RPC errors count as false) until it holds; fails with the members' output past the timeout.</summary>
    private static async Task EventuallyAsync(Func<Task<bool>> condition, EtcdCluster cluster, TimeSpan? timeout = null)
    {
        var limit = timeout ?? TimeSpan.FromSeconds(15);
        var clock = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                if (await condition())
                {
                    return;
                }
            }
            catch (RpcException)
            {
                // Not yet.
            }

            Assert.True(clock.Elapsed < limit, $"condition not met within {limit}:\n{cluster.Output}");
            await Task.Delay(100);
        }
    }

    private static DateTime In(double seconds) => DateTime.UtcNow.AddSeconds(seconds);

    private static int MemberNumber(HashSet<ulong> members, ulong id) => members.ToList().IndexOf(id) + 1;

    private Task<Timed<T>> Time<T>(string what, Func<Task<T>> call) => Timed.RunAsync(what, call, Log);

    private void Log(string line) => output.WriteLine($"[{DateTime.UtcNow:HH:mm:ss.fff}] {line}");
}
