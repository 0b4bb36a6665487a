using System.Collections.Immutable;
using System.Text.Json;

namespace Indexing.Cluster.Tests;

/// <summary>
/// The cluster's etcd transactions against three real members: the map written once, a member id
/// taken once, and the switch, which fails when the index or any shard's report changed after it read them.
/// </summary>
[Collection(ClusterProcesses.Name)]
public sealed class EtcdCoordinatorTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(5);

    [Fact]
    public async Task Transactions_MapOnce_MemberIdOnce_SwitchOnlyOnWhatItRead()
    {
        await using var etcd = await EtcdCluster.StartAsync();
        using var coordinator = new EtcdCoordinator(etcd.Endpoints, new ClusterKeys("/test/"), Timeout);

        // The map: written once; a second init finds the first.
        var map = ShardMap.RoundRobin(["n1", "n2"], 8);
        Assert.True((await coordinator.InitializeMapAsync(map, default)).Created);
        var (stored, created) = await coordinator.InitializeMapAsync(ShardMap.RoundRobin(["n1", "n2", "n3"], 8), default);
        Assert.False(created);
        Assert.Equal(map.Nodes.ToArray(), stored.Nodes.ToArray());

        // A member id: taken under one lease, refused to another while that lease lives.
        var first = await coordinator.GrantLeaseAsync(TimeSpan.FromSeconds(10), default);
        Assert.Null(await coordinator.PutMemberIfAbsentAsync(new MemberRecord("n1", "http://127.0.0.1:1/", first), default));
        var second = await coordinator.GrantLeaseAsync(TimeSpan.FromSeconds(10), default);
        var holder = await coordinator.PutMemberIfAbsentAsync(new MemberRecord("n1", "http://127.0.0.1:2/", second), default);
        Assert.Equal(first, Assert.IsType<MemberRecord>(holder).Lease);
        await coordinator.RevokeLeaseAsync(first, default);
        Assert.Null(await coordinator.PutMemberIfAbsentAsync(new MemberRecord("n1", "http://127.0.0.1:2/", second), default));

        // The switch: "1 active, 2 pending" with both shards' reports.
        var v1 = new IndexGeneration(1, JsonDocument.Parse(ClusterApi.V1).RootElement.Clone());
        var v2 = new IndexGeneration(2, JsonDocument.Parse(ClusterApi.V2).RootElement.Clone());
        Assert.True(await coordinator.PutIndexAsync(new ClusterIndex("orders", v1, v2, null, 2), 0, default));
        Assert.False(await coordinator.PutIndexAsync(new ClusterIndex("orders", v1, null, null, 2), 0, default));
        var hash = v2.Parse().DefinitionHash;
        foreach (var node in map.Nodes)
        {
            await coordinator.PutProgressAsync(new ShardProgress(node, "orders", 2, hash, true, "Ready", 10, 10, 0, null, DateTimeOffset.UnixEpoch), default);
        }

        var read = await coordinator.ReadAsync(default);
        var index = read.Indexes["orders"];
        var reports = read.ProgressOf("orders").ToImmutableDictionary(p => p.Key, p => p.Value.Stored);
        var switched = index.Index with { Active = v2, Pending = null };

        // A shard's report changed after the read (it restarted, say): no switch.
        await coordinator.PutProgressAsync(new ShardProgress("n2", "orders", 2, hash, false, "Bulk", 3, 10, 0, null, DateTimeOffset.UnixEpoch), default);
        Assert.Null(await coordinator.TrySwitchAsync(switched, index.ModRevision, reports, default));

        // Read again: the reports are as read, but the index changed (a definition change): no switch.
        await coordinator.PutProgressAsync(new ShardProgress("n2", "orders", 2, hash, true, "Ready", 10, 10, 0, null, DateTimeOffset.UnixEpoch), default);
        read = await coordinator.ReadAsync(default);
        reports = read.ProgressOf("orders").ToImmutableDictionary(p => p.Key, p => p.Value.Stored);
        Assert.True(await coordinator.PutIndexAsync(read.Indexes["orders"].Index with { SwitchedAt = DateTimeOffset.UnixEpoch }, read.Indexes["orders"].ModRevision, default));
        Assert.Null(await coordinator.TrySwitchAsync(switched, read.Indexes["orders"].ModRevision, reports, default));

        // Nothing changed since the read: the switch, in one revision.
        read = await coordinator.ReadAsync(default);
        reports = read.ProgressOf("orders").ToImmutableDictionary(p => p.Key, p => p.Value.Stored);
        var revision = await coordinator.TrySwitchAsync(switched, read.Indexes["orders"].ModRevision, reports, default);
        Assert.NotNull(revision);
        var after = await coordinator.ReadAsync(default);
        Assert.Equal(2, after.Indexes["orders"].Index.Active.Generation);
        Assert.Null(after.Indexes["orders"].Index.Pending);
        Assert.Equal(revision, after.Indexes["orders"].ModRevision);
    }
}
