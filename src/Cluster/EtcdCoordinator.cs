using System.Collections.Immutable;
using dotnet_etcd;
using Etcdserverpb;
using Google.Protobuf;
using Grpc.Core;

namespace Indexing.Cluster;

/// <summary>
/// The cluster's reads and writes in etcd (keys: <see cref="ClusterKeys"/>), each with a deadline, so
/// that an etcd without quorum answers <see cref="ClusterUnavailableException"/> instead of hanging.
/// Every read is linearizable: a member cut off from the majority cannot serve an old state.
/// </summary>
public sealed class EtcdCoordinator : IDisposable
{
    private readonly EtcdClient _client;
    private readonly TimeSpan _timeout;
    private readonly Lazy<EtcdClient[]> _members;

    /// <summary>A client of the members at <paramref name="endpoints"/> (comma-separated URLs, e.g. http://127.0.0.1:2379,http://127.0.0.1:22379).</summary>
    public EtcdCoordinator(string endpoints, ClusterKeys keys, TimeSpan timeout)
    {
        ArgumentException.ThrowIfNullOrEmpty(endpoints);
        Endpoints = endpoints;
        Keys = keys;
        _timeout = timeout;
        _client = new EtcdClient(endpoints);
        _members = new Lazy<EtcdClient[]>(() => [.. endpoints.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries).Select(e => new EtcdClient(e))]);
    }

    public string Endpoints { get; }

    public ClusterKeys Keys { get; }

    /// <summary>Reads the whole cluster state at one revision.</summary>
    public async Task<ClusterSnapshot> ReadAsync(CancellationToken cancellationToken)
    {
        var response = await CallAsync(
            "reading the cluster state",
            deadline => _client.GetRangeAsync(Keys.Prefix, deadline: deadline, cancellationToken: cancellationToken)).ConfigureAwait(false);
        ShardMap? map = null;
        var members = ImmutableDictionary.CreateBuilder<string, MemberRecord>(StringComparer.Ordinal);
        var indexes = ImmutableDictionary.CreateBuilder<string, VersionedIndex>(StringComparer.Ordinal);
        var progress = new Dictionary<string, ImmutableDictionary<string, VersionedProgress>.Builder>(StringComparer.Ordinal);
        foreach (var kv in response.Kvs)
        {
            var key = kv.Key.ToStringUtf8();
            var value = kv.Value.Span;
            if (key == Keys.Map)
            {
                map = ClusterJson.Deserialize<ShardMap>(value, key);
                map.Validate();
            }
            else if (key.StartsWith(Keys.MembersPrefix, StringComparison.Ordinal))
            {
                var member = ClusterJson.Deserialize<MemberRecord>(value, key);
                members[member.Node] = member;
            }
            else if (key.StartsWith(Keys.IndexesPrefix, StringComparison.Ordinal))
            {
                var index = ClusterJson.Deserialize<ClusterIndex>(value, key);
                indexes[index.Name] = new VersionedIndex(index, kv.ModRevision);
            }
            else if (key.StartsWith(Keys.ProgressPrefix, StringComparison.Ordinal))
            {
                var report = ClusterJson.Deserialize<ShardProgress>(value, key);
                if (!progress.TryGetValue(report.Index, out var reports))
                {
                    progress[report.Index] = reports = ImmutableDictionary.CreateBuilder<string, VersionedProgress>(StringComparer.Ordinal);
                }

                reports[report.Node] = new VersionedProgress(report, value.ToArray());
            }
        }

        return new ClusterSnapshot(
            response.Header.Revision,
            map,
            members.ToImmutable(),
            indexes.ToImmutable(),
            progress.ToImmutableDictionary(p => p.Key, p => p.Value.ToImmutable(), StringComparer.Ordinal),
            DateTimeOffset.UtcNow);
    }

    /// <summary>Writes <paramref name="map"/> if the cluster has none yet; returns the map the cluster has (this one, or the one written before).</summary>
    public async Task<(ShardMap Map, bool Created)> InitializeMapAsync(ShardMap map, CancellationToken cancellationToken)
    {
        map.Validate();
        var request = new TxnRequest();
        request.Compare.Add(new Compare { Key = Key(Keys.Map), Target = Compare.Types.CompareTarget.Version, Result = Compare.Types.CompareResult.Equal, Version = 0 });
        request.Success.Add(new RequestOp { RequestPut = new PutRequest { Key = Key(Keys.Map), Value = ByteString.CopyFrom(ClusterJson.Serialize(map)) } });
        request.Failure.Add(new RequestOp { RequestRange = new RangeRequest { Key = Key(Keys.Map) } });
        var response = await CallAsync("writing the shard map", deadline => _client.TransactionAsync(request, deadline: deadline, cancellationToken: cancellationToken)).ConfigureAwait(false);
        if (response.Succeeded)
        {
            return (map, true);
        }

        var existing = response.Responses[0].ResponseRange.Kvs[0];
        var stored = ClusterJson.Deserialize<ShardMap>(existing.Value.Span, Keys.Map);
        return (stored, false);
    }

    /// <summary>Grants a lease of <paramref name="ttl"/>; returns its id.</summary>
    public async Task<long> GrantLeaseAsync(TimeSpan ttl, CancellationToken cancellationToken)
    {
        var response = await CallAsync(
            "granting the node's lease",
            deadline => _client.LeaseGrantAsync(new LeaseGrantRequest { TTL = (long)Math.Ceiling(ttl.TotalSeconds) }, deadline: deadline, cancellationToken: cancellationToken)).ConfigureAwait(false);
        return response.ID;
    }

    /// <summary>Renews <paramref name="lease"/> once; returns the TTL etcd gives it now (0 or less: the lease has expired).</summary>
    public async Task<long> RenewLeaseAsync(long lease, CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(_timeout);
        long ttl = 0;
        var answered = false;
        try
        {
            await _client.LeaseKeepAlive(
                new LeaseKeepAliveRequest { ID = lease },
                response =>
                {
                    ttl = response.TTL;
                    answered = true;
                },
                deadline.Token,
                null).ConfigureAwait(false);
        }
        catch (Exception e) when (e is RpcException or OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            throw new ClusterUnavailableException($"renewing the node's lease: etcd ({Endpoints}) did not answer within {_timeout.TotalSeconds:0.#} s ({Describe(e)})", e);
        }

        if (!answered)
        {
            throw new ClusterUnavailableException($"renewing the node's lease: etcd ({Endpoints}) did not answer");
        }

        return ttl;
    }

    /// <summary>
    /// Writes the node's member record, attached to its lease, if no record holds the id: returns null
    /// when written, else the record that holds it (another live process with this id).
    /// </summary>
    public async Task<MemberRecord?> PutMemberIfAbsentAsync(MemberRecord member, CancellationToken cancellationToken)
    {
        var key = Key(Keys.Member(member.Node));
        var request = new TxnRequest();
        request.Compare.Add(new Compare { Key = key, Target = Compare.Types.CompareTarget.Version, Result = Compare.Types.CompareResult.Equal, Version = 0 });
        request.Success.Add(new RequestOp { RequestPut = new PutRequest { Key = key, Value = ByteString.CopyFrom(ClusterJson.Serialize(member)), Lease = member.Lease } });
        request.Failure.Add(new RequestOp { RequestRange = new RangeRequest { Key = key } });
        var response = await CallAsync("writing the node's member record", deadline => _client.TransactionAsync(request, deadline: deadline, cancellationToken: cancellationToken)).ConfigureAwait(false);
        if (response.Succeeded)
        {
            return null;
        }

        var kvs = response.Responses[0].ResponseRange.Kvs;
        return kvs.Count == 0 ? member with { Lease = 0 } : ClusterJson.Deserialize<MemberRecord>(kvs[0].Value.Span, Keys.Member(member.Node));
    }

    /// <summary>Revokes <paramref name="lease"/> (a clean stop: the member record goes at once).</summary>
    public Task RevokeLeaseAsync(long lease, CancellationToken cancellationToken) =>
        CallAsync("revoking the node's lease", deadline => _client.LeaseRevokeAsync(new LeaseRevokeRequest { ID = lease }, deadline: deadline, cancellationToken: cancellationToken));

    /// <summary>
    /// Writes <paramref name="index"/> if its key is still at <paramref name="expectedModRevision"/> (0: if
    /// it does not exist); false when someone else changed it first.
    /// </summary>
    public async Task<bool> PutIndexAsync(ClusterIndex index, long expectedModRevision, CancellationToken cancellationToken)
    {
        var request = new TxnRequest();
        request.Compare.Add(new Compare { Key = Key(Keys.Index(index.Name)), Target = Compare.Types.CompareTarget.Mod, Result = Compare.Types.CompareResult.Equal, ModRevision = expectedModRevision });
        request.Success.Add(new RequestOp { RequestPut = new PutRequest { Key = Key(Keys.Index(index.Name)), Value = ByteString.CopyFrom(ClusterJson.Serialize(index)) } });
        var response = await CallAsync(
            $"writing index {MessageText.Quote(index.Name)}",
            deadline => _client.TransactionAsync(request, deadline: deadline, cancellationToken: cancellationToken)).ConfigureAwait(false);
        return response.Succeeded;
    }

    /// <summary>Writes a shard's progress report.</summary>
    public Task PutProgressAsync(ShardProgress progress, CancellationToken cancellationToken) =>
        CallAsync(
            "reporting the shard's progress",
            deadline => _client.PutAsync(
                new PutRequest { Key = Key(Keys.Progress(progress.Index, progress.Node)), Value = ByteString.CopyFrom(ClusterJson.Serialize(progress)) },
                deadline: deadline,
                cancellationToken: cancellationToken));

    /// <summary>
    /// The cluster-wide switch, one transaction: if the index's key is still at <paramref name="indexModRevision"/>
    /// and every shard's progress report still holds exactly the bytes in <paramref name="readyReports"/>
    /// (each saying ready for the pending generation), the pending generation becomes the active one.
    /// Returns the revision of the switch, or null when anything compared had changed.
    /// </summary>
    public async Task<long?> TrySwitchAsync(
        ClusterIndex switched, long indexModRevision, IReadOnlyDictionary<string, byte[]> readyReports, CancellationToken cancellationToken)
    {
        var request = new TxnRequest();
        request.Compare.Add(new Compare { Key = Key(Keys.Index(switched.Name)), Target = Compare.Types.CompareTarget.Mod, Result = Compare.Types.CompareResult.Equal, ModRevision = indexModRevision });
        foreach (var (node, stored) in readyReports)
        {
            request.Compare.Add(new Compare
            {
                Key = Key(Keys.Progress(switched.Name, node)),
                Target = Compare.Types.CompareTarget.Value,
                Result = Compare.Types.CompareResult.Equal,
                Value = ByteString.CopyFrom(stored),
            });
        }

        request.Success.Add(new RequestOp { RequestPut = new PutRequest { Key = Key(Keys.Index(switched.Name)), Value = ByteString.CopyFrom(ClusterJson.Serialize(switched)) } });
        var response = await CallAsync(
            $"switching index {MessageText.Quote(switched.Name)}",
            deadline => _client.TransactionAsync(request, deadline: deadline, cancellationToken: cancellationToken)).ConfigureAwait(false);
        return response.Succeeded ? response.Header.Revision : null;
    }

    /// <summary>
    /// What the members say of their leader, each asked alone and at once: <see cref="QuorumView.NoLeader"/>
    /// when at least one answers and every one that answers has no leader (the cluster lost its quorum,
    /// as far as this node can see), <see cref="QuorumView.LeaderSeen"/> when one names a leader, and
    /// <see cref="QuorumView.NoAnswer"/> when none answers (this node is cut off).
    /// </summary>
    public async Task<QuorumView> AskMembersAsync(CancellationToken cancellationToken)
    {
        var answers = await Task.WhenAll(_members.Value.Select(async member =>
        {
            try
            {
                var status = await member.StatusAsync(new StatusRequest(), deadline: DateTime.UtcNow + _timeout, cancellationToken: cancellationToken).ConfigureAwait(false);
                return (ulong?)status.Leader;
            }
            catch (RpcException)
            {
                return null;
            }
        })).ConfigureAwait(false);
        return answers.Any(a => a is > 0) ? QuorumView.LeaderSeen
            : answers.Any(a => a is 0) ? QuorumView.NoLeader
            : QuorumView.NoAnswer;
    }

    public void Dispose()
    {
        _client.Dispose();
        if (_members.IsValueCreated)
        {
            foreach (var member in _members.Value)
            {
                member.Dispose();
            }
        }
    }

    private static ByteString Key(string key) => ByteString.CopyFromUtf8(key);

    private async Task<T> CallAsync<T>(string what, Func<DateTime, Task<T>> call)
    {
        try
        {
            return await call(DateTime.UtcNow + _timeout).ConfigureAwait(false);
        }
        catch (RpcException e) when (e.StatusCode is StatusCode.Unavailable or StatusCode.DeadlineExceeded or StatusCode.Cancelled or StatusCode.Internal or StatusCode.Unknown)
        {
            throw new ClusterUnavailableException($"{what}: etcd ({Endpoints}) did not answer within {_timeout.TotalSeconds:0.#} s ({Describe(e)}); it needs a majority of its members up", e);
        }
    }

    private static string Describe(Exception e) => e is RpcException rpc ? $"{rpc.StatusCode}: {rpc.Status.Detail}" : e.GetType().Name;
}

/// <summary>What etcd's members say of their leader (<see cref="EtcdCoordinator.AskMembersAsync"/>).</summary>
public enum QuorumView
{
    /// <summary>A member names a leader: etcd has a quorum (this node may still fail to reach it).</summary>
    LeaderSeen,

    /// <summary>Members answer, and none has a leader: the quorum is lost, and etcd expires no lease.</summary>
    NoLeader,

    /// <summary>No member answers: this node is cut off.</summary>
    NoAnswer,
}

/// <summary>etcd did not answer in time: unreachable from this node, or without a quorum. Cluster-wide changes wait; documents and queries go on.</summary>
public sealed class ClusterUnavailableException(string message, Exception? inner = null) : Exception(message, inner);
