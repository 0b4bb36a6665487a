using System.Collections.Concurrent;
using System.Globalization;
using Indexing.Engine;
using Indexing.Indexer;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Indexing.Cluster;

/// <summary>
/// One node of a cluster: holds its lease in etcd, follows the cluster's state there, and keeps its
/// single-node engine in line with it. For every cluster index it holds one local index per live
/// generation, named <c>&lt;index&gt;--g&lt;generation&gt;</c> (<see cref="LocalName"/>), built by the
/// engine's own prefetcher and resumed by it after a restart. It reports each generation's build in
/// etcd and, when every shard reports the pending generation ready with its definition, makes the
/// switch: one etcd transaction that compares the index's revision and every report
/// (<see cref="EtcdCoordinator.TrySwitchAsync"/>). Any node may attempt it; the compare lets exactly
/// one succeed.
/// <para>
/// Two loops: the lease's (renewal every third of the TTL, retried within it) and the state's (a read
/// every poll, then the local indexes, the report and the switch); deleting retired generations runs
/// beside them, so a long drain never delays a renewal.
/// </para>
/// <para>
/// The write gate (<see cref="CanAcceptWrites"/>): a node accepts writes for its buckets while its
/// lease lives. When a renewal says the lease expired, or when it could not renew it for a whole TTL
/// (measured on a monotonic clock from the last renewal sent), it refuses writes until it has joined
/// again; when its id is held by another process's lease, it refuses them until restarted. When etcd's
/// members answer but none has a leader (the quorum is lost) and the lease was valid when that was
/// first seen, leases do not run out (etcd's leader expires them, and a new leader gives each its whole
/// TTL again), so the node goes on accepting writes: documents and queries do not depend on etcd's
/// quorum, only definition changes and switches do.
/// </para>
/// </summary>
public sealed partial class ClusterNode : IAsyncDisposable
{
    private const string GenerationSeparator = "--g";

    private readonly ClusterOptions _options;
    private readonly IndexingEngine _engine;
    private readonly EtcdCoordinator _etcd;
    private readonly ILogger _logger;
    private readonly string _url;
    private readonly CancellationTokenSource _stopping = new();
    private readonly ConcurrentDictionary<string, long> _retireAt = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, Task> _retiring = new(StringComparer.Ordinal);
    private readonly Dictionary<string, long> _reportedAt = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, string> _localErrors = new(StringComparer.Ordinal);
    private readonly Lock _leaseLock = new();
    private readonly HashSet<long> _ownLeases = [];
    private Task _stateLoop = Task.CompletedTask;
    private Task _leaseLoop = Task.CompletedTask;
    private ClusterSnapshot _snapshot = ClusterSnapshot.Empty;
    private long _lease;
    private long _leaseValidUntil;
    private bool _leaseExpired;
    private long? _frozenSince;
    private string? _displaced;
    private DateTimeOffset? _unreachableSince;
    private string? _lastEtcdError;
    private long _switches;

    private ClusterNode(ClusterOptions options, IndexingEngine engine, EtcdCoordinator etcd, Uri url, ILogger logger)
    {
        _options = options;
        _engine = engine;
        _etcd = etcd;
        _url = url.ToString();
        _logger = logger;
    }

    /// <summary>This node's id.</summary>
    public string NodeId => _options.NodeId;

    /// <summary>The settings the node joined with.</summary>
    public ClusterOptions Options => _options;

    /// <summary>The URL the other nodes reach this node at (its member record's).</summary>
    public string Url => _url;

    /// <summary>The shard map (fixed once the node has joined).</summary>
    public ShardMap Map { get; private set; } = null!;

    /// <summary>The cluster's state as the last successful read saw it.</summary>
    public ClusterSnapshot Snapshot => Volatile.Read(ref _snapshot);

    /// <summary>Since when etcd has not answered this node (null while it answers), and why.</summary>
    public (DateTimeOffset? Since, string? Error) EtcdUnreachable => (_unreachableSince, _lastEtcdError);

    /// <summary>How many switches this node made (each one etcd transaction).</summary>
    public long Switches => Interlocked.Read(ref _switches);

    /// <summary>The longest cluster index name: its local names add <c>--g</c> and up to 10 digits to it, within the engine's 64.</summary>
    public const int MaxIndexNameLength = 50;

    // Milliseconds on a clock that a change of the wall clock does not move.
    private static long Now => Environment.TickCount64;

    /// <summary>The local index name of <paramref name="index"/>'s <paramref name="generation"/>.</summary>
    public static string LocalName(string index, int generation) => index + GenerationSeparator + generation.ToString(CultureInfo.InvariantCulture);

    /// <summary>Splits a local index name made by <see cref="LocalName"/>; false for any other name.</summary>
    public static bool TryParseLocalName(string local, out string index, out int generation)
    {
        var at = local.LastIndexOf(GenerationSeparator, StringComparison.Ordinal);
        index = at > 0 ? local[..at] : string.Empty;
        generation = 0;
        return at > 0 && int.TryParse(local.AsSpan(at + GenerationSeparator.Length), NumberStyles.None, CultureInfo.InvariantCulture, out generation) && generation > 0;
    }

    /// <summary>
    /// Joins the cluster: reads its shard map (which must name <see cref="ClusterOptions.NodeId"/>), takes a
    /// lease and writes the member record under it (waiting out the lease of an earlier process with this
    /// id, a restart's), then follows the cluster's state until disposed. <paramref name="url"/> is where
    /// the other nodes reach this node's HTTP API. etcd is given ten timeouts to answer (an election).
    /// </summary>
    /// <exception cref="ClusterUnavailableException">etcd did not answer.</exception>
    /// <exception cref="InvalidOperationException">The cluster has no shard map, the map does not name this node, or a live process holds its id.</exception>
    public static async Task<ClusterNode> JoinAsync(ClusterOptions options, IndexingEngine engine, Uri url, ILogger? logger, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(engine);
        ArgumentNullException.ThrowIfNull(url);
        options.Validate();
        var etcd = new EtcdCoordinator(options.Endpoints, new ClusterKeys(options.Prefix), options.EtcdTimeout);
        var node = new ClusterNode(options, engine, etcd, url, logger ?? NullLogger.Instance);
        try
        {
            var giveUpAt = Now + (long)(10 * options.EtcdTimeout.TotalMilliseconds);
            while (true)
            {
                try
                {
                    await node.JoinOnceAsync(cancellationToken).ConfigureAwait(false);
                    break;
                }
                catch (ClusterUnavailableException e) when (Now < giveUpAt)
                {
                    node._logger.LogWarning("joining the cluster: {Error}; trying again", e.Message);
                    await Task.Delay(options.PollInterval, cancellationToken).ConfigureAwait(false);
                }
            }

            node._leaseLoop = Task.Run(() => node.LeaseLoopAsync(node._stopping.Token), CancellationToken.None);
            node._stateLoop = Task.Run(() => node.StateLoopAsync(node._stopping.Token), CancellationToken.None);
            node._logger.LogInformation(
                "joined the cluster as {Node} at {Url} ({Buckets} of {Total} buckets; etcd {Endpoints})",
                options.NodeId, node._url, node.Map.BucketsOf(options.NodeId).Count(), node.Map.Buckets, options.Endpoints);
            return node;
        }
        catch
        {
            etcd.Dispose();
            throw;
        }
    }

    private async Task JoinOnceAsync(CancellationToken cancellationToken)
    {
        var snapshot = await _etcd.ReadAsync(cancellationToken).ConfigureAwait(false);
        Map = snapshot.Map ?? throw new InvalidOperationException(
            $"the cluster under {MessageText.Quote(_etcd.Keys.Prefix)} in etcd ({_options.Endpoints}) has no shard map yet; " +
            "write it once with `indexing cluster init --cluster <endpoints> --nodes n1,n2,n3`.");
        if (!Map.Nodes.Contains(NodeId))
        {
            throw new InvalidOperationException(
                $"node {MessageText.Quote(NodeId)} is not in the cluster's shard map ({string.Join(", ", Map.Nodes)}); start it with one of those ids.");
        }

        // After a crash the old process's member record lives until its lease expires: wait for it
        // (two TTLs at most) rather than take the id from a process that may still be alive.
        var waitUntil = Now + (long)((2 * _options.LeaseTtl) + _options.EtcdTimeout).TotalMilliseconds;
        while (await RegisterAsync(cancellationToken).ConfigureAwait(false) is { } holder)
        {
            if (Now > waitUntil)
            {
                throw new InvalidOperationException(
                    $"node id {MessageText.Quote(NodeId)} is held by a live member at {holder.Url} (lease {holder.Lease}); each node needs its own id.");
            }

            _logger.LogInformation("node id {Node} is still held by lease {Lease} ({Url}), probably this node before a restart; waiting for it to expire", NodeId, holder.Lease, holder.Url);
            await Task.Delay(TimeSpan.FromMilliseconds(250), cancellationToken).ConfigureAwait(false);
        }

        var joined = await _etcd.ReadAsync(cancellationToken).ConfigureAwait(false);
        Volatile.Write(ref _snapshot, joined);
        Reconcile(joined);
    }

    /// <summary>The node that owns <paramref name="id"/>'s bucket.</summary>
    public string OwnerOf(string id) => Map.OwnerOf(id);

    /// <summary>
    /// Whether this node accepts writes for its buckets now; <paramref name="reason"/> says why not
    /// (see the type's remarks).
    /// </summary>
    public bool CanAcceptWrites(out string? reason)
    {
        lock (_leaseLock)
        {
            if (_displaced is not null)
            {
                reason = _displaced;
                return false;
            }

            if (_leaseExpired)
            {
                reason = $"node {MessageText.Quote(NodeId)} lost its lease in etcd and has not joined again yet, so it takes no writes for its buckets; it rejoins as soon as etcd answers.";
                return false;
            }

            if (Now < _leaseValidUntil || _frozenSince is not null)
            {
                reason = null;
                return true;
            }

            reason = $"node {MessageText.Quote(NodeId)} could not renew its lease in etcd for {_options.LeaseTtl.TotalSeconds:0} s ({_lastEtcdError ?? "no answer"}), so etcd may have expired it: it takes no writes for its buckets until it renews it.";
            return false;
        }
    }

    /// <summary>The member record of <paramref name="node"/> (its URL) while its lease lives; null when it is down.</summary>
    public MemberRecord? Member(string node) => Snapshot.Members.TryGetValue(node, out var member) ? member : null;

    /// <summary>
    /// Defines or changes a cluster index, in etcd: a new index starts at generation 1, active at once
    /// (each shard builds it; queries read what it holds so far, as on a single node); a changed one gets
    /// a pending generation that every shard builds beside the active one, switched in when all are
    /// ready. A change while a rebuild is pending replaces it (each shard cancels the first); the active
    /// definition again cancels the pending one. Generation numbers only grow.
    /// </summary>
    /// <exception cref="ArgumentException">The name is longer than <see cref="MaxIndexNameLength"/>.</exception>
    /// <exception cref="ClusterUnavailableException">etcd has no quorum or cannot be reached: nothing changed.</exception>
    public async Task<DefineOutcome> DefineAsync(IndexDefinition definition, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(definition);
        if (definition.Name.Length > MaxIndexNameLength)
        {
            throw new ArgumentException($"index name {MessageText.Quote(definition.Name)} has {definition.Name.Length} characters; a cluster index name has at most {MaxIndexNameLength} (each shard adds its generation to it).");
        }

        var generation = new IndexGeneration(0, System.Text.Json.JsonDocument.Parse(definition.ToJson()).RootElement.Clone());
        // A leader's loss makes etcd unavailable for an election (about 2 s): ride that out, and answer
        // unavailable only when it lasts (no quorum). A write that timed out may still have been applied;
        // the retry reads it back and finds the definition in place (Unchanged).
        var giveUpAt = Now + (long)(3 * _options.EtcdTimeout.TotalMilliseconds);
        var conflicts = 0;
        while (true)
        {
            try
            {
                if (await TryDefineAsync(definition, generation, cancellationToken).ConfigureAwait(false) is { } outcome)
                {
                    return outcome;
                }
            }
            catch (ClusterUnavailableException) when (Now < giveUpAt)
            {
                await Task.Delay(_options.PollInterval, cancellationToken).ConfigureAwait(false);
                continue;
            }

            if (++conflicts >= 10)
            {
                throw new ClusterUnavailableException($"index {MessageText.Quote(definition.Name)} changed in etcd ten times while this change was being written; try again.");
            }
        }
    }

    // One read and one compare-and-swap; null when the index changed in between.
    private async Task<DefineOutcome?> TryDefineAsync(IndexDefinition definition, IndexGeneration generation, CancellationToken cancellationToken)
    {
        var snapshot = await _etcd.ReadAsync(cancellationToken).ConfigureAwait(false);
        ClusterIndex next;
        DefineResult result;
        long expected;
        if (!snapshot.Indexes.TryGetValue(definition.Name, out var existing))
        {
            next = new ClusterIndex(definition.Name, generation with { Generation = 1 }, null, null, LastGeneration: 1);
            result = DefineResult.Created;
            expected = 0;
        }
        else
        {
            var index = existing.Index;
            expected = existing.ModRevision;
            if (index.Newest.Parse().DefinitionHash == definition.DefinitionHash)
            {
                return new DefineOutcome(DefineResult.Unchanged, index);
            }

            if (index.Pending is not null && index.Active.Parse().DefinitionHash == definition.DefinitionHash)
            {
                next = index with { Pending = null, LastGeneration = index.NextGeneration - 1 };
                result = DefineResult.RebuildCancelled;
            }
            else
            {
                var number = index.NextGeneration;
                next = index with { Pending = generation with { Generation = number }, LastGeneration = number };
                result = index.Pending is null ? DefineResult.RebuildStarted : DefineResult.RebuildReplaced;
            }
        }

        if (!await _etcd.PutIndexAsync(next, expected, cancellationToken).ConfigureAwait(false))
        {
            return null;
        }

        _logger.LogInformation("index {Index}: {Result} (active generation {Active}, pending {Pending})", next.Name, result, next.Active.Generation, next.Pending?.Generation);
        return new DefineOutcome(result, next);
    }

    /// <summary>
    /// Reads the cluster's state now rather than at the next poll (a name this node has not seen yet may
    /// be one another node has just defined); keeps the last state when etcd does not answer.
    /// </summary>
    public async Task<ClusterSnapshot> RefreshAsync(CancellationToken cancellationToken)
    {
        try
        {
            Advance(await _etcd.ReadAsync(cancellationToken).ConfigureAwait(false));
        }
        catch (ClusterUnavailableException)
        {
            // The last state stands; the caller answers from it.
        }

        return Snapshot;
    }

    /// <summary>Each node's report on <paramref name="index"/>'s newest generation, as etcd holds them.</summary>
    public IReadOnlyDictionary<string, ShardProgress> ProgressOf(string index) =>
        Snapshot.ProgressOf(index).ToDictionary(p => p.Key, p => p.Value.Progress, StringComparer.Ordinal);

    /// <summary>
    /// Leaves the cluster: stops following it, then revokes the lease (the other nodes see this node
    /// down at once, not a TTL later). Never throws: a lease etcd cannot revoke now expires on its own.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (_stopping.IsCancellationRequested)
        {
            return;
        }

        await _stopping.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_stateLoop, _leaseLoop).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await Task.WhenAll(_retiring.Values).WaitAsync(_options.EtcdTimeout).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        try
        {
            await _etcd.RevokeLeaseAsync(_lease, CancellationToken.None).ConfigureAwait(false);
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            _logger.LogWarning("leaving the cluster: revoking lease {Lease} failed ({Error}); etcd expires it within {Ttl}", _lease, e.Message, _options.LeaseTtl);
        }

        _etcd.Dispose();
        _stopping.Dispose();
    }

    // Writes the member record under a new lease if no record holds the id; returns the holder otherwise.
    private async Task<MemberRecord?> RegisterAsync(CancellationToken cancellationToken)
    {
        var sent = Now;
        var lease = await _etcd.GrantLeaseAsync(_options.LeaseTtl, cancellationToken).ConfigureAwait(false);
        lock (_leaseLock)
        {
            _ownLeases.Add(lease);
        }

        if (await _etcd.PutMemberIfAbsentAsync(new MemberRecord(NodeId, _url, lease), cancellationToken).ConfigureAwait(false) is { } holder)
        {
            // Not ours to keep: let it go at once.
            try
            {
                await _etcd.RevokeLeaseAsync(lease, cancellationToken).ConfigureAwait(false);
            }
            catch (Exception e) when (e is Grpc.Core.RpcException or ClusterUnavailableException)
            {
                // It expires within its TTL.
            }

            return holder;
        }

        lock (_leaseLock)
        {
            _lease = lease;
            _leaseValidUntil = sent + (long)_options.LeaseTtl.TotalMilliseconds;
            _leaseExpired = false;
            _frozenSince = null;
        }

        return null;
    }

    // Renews the lease every third of its TTL; after a failure, tries again every poll interval (so a
    // lost election does not cost the lease), and tells a lost quorum from being cut off.
    private async Task LeaseLoopAsync(CancellationToken stopping)
    {
        var third = _options.LeaseTtl / 3;
        while (!stopping.IsCancellationRequested)
        {
            var wait = third;
            try
            {
                if (!await KeepLeaseAsync(stopping).ConfigureAwait(false))
                {
                    wait = _options.PollInterval;
                }
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                _logger.LogWarning(e, "keeping the lease failed: {Error}", e.Message);
                wait = _options.PollInterval;
            }

            await Task.Delay(wait, stopping).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    // One renewal (or a new join after the lease expired); false when etcd did not answer.
    private async Task<bool> KeepLeaseAsync(CancellationToken stopping)
    {
        bool expired;
        long lease;
        lock (_leaseLock)
        {
            if (_displaced is not null)
            {
                return true;
            }

            expired = _leaseExpired;
            lease = _lease;
        }

        try
        {
            if (expired)
            {
                if (await RegisterAsync(stopping).ConfigureAwait(false) is { } holder)
                {
                    Displace(holder);
                }
                else
                {
                    _logger.LogWarning("node {Node} joined the cluster again with a new lease after its lease expired", NodeId);
                }

                return true;
            }

            var sent = Now;
            var ttl = await _etcd.RenewLeaseAsync(lease, stopping).ConfigureAwait(false);
            lock (_leaseLock)
            {
                if (ttl <= 0)
                {
                    _leaseExpired = true;
                    _frozenSince = null;
                    _logger.LogWarning("node {Node}'s lease {Lease} has expired in etcd: it takes no writes until it joins again", NodeId, lease);
                    return true;
                }

                _leaseValidUntil = sent + (ttl * 1000);
                _frozenSince = null;
            }

            return true;
        }
        catch (ClusterUnavailableException e)
        {
            Unreachable(e);
            var view = await _etcd.AskMembersAsync(stopping).ConfigureAwait(false);
            lock (_leaseLock)
            {
                // A member that names a leader means the cluster has one, which this node cannot reach:
                // the lease runs out. Members that all answer without one mean the quorum is lost, and
                // leases stop running, if it was lost while the lease was valid. A member notices a lost
                // leader within a few election timeouts, and this node notices after a failed renewal:
                // so a quorum loss first seen within a TTL after the lease's end counts, one seen later
                // does not (the lease may have been expired by a leader before the quorum went).
                var withinSlack = Now < _leaseValidUntil + (long)_options.LeaseTtl.TotalMilliseconds;
                _frozenSince = view == QuorumView.NoLeader && (_frozenSince is not null || withinSlack) ? _frozenSince ?? Now : null;
            }

            return false;
        }
    }

    private void Displace(MemberRecord holder)
    {
        lock (_leaseLock)
        {
            _displaced ??= $"node id {MessageText.Quote(NodeId)} is now held by another process (lease {holder.Lease}, {holder.Url}), so this one takes no writes; stop one of them (each node needs its own id).";
        }

        _logger.LogError("{Reason}", _displaced);
    }

    private void Unreachable(ClusterUnavailableException e)
    {
        _unreachableSince ??= DateTimeOffset.UtcNow;
        if (_lastEtcdError != e.Message)
        {
            _logger.LogWarning("etcd: {Error}", e.Message);
        }

        _lastEtcdError = e.Message;
    }

    // Moves the snapshot forward only (a refresh and the loop may race).
    private void Advance(ClusterSnapshot snapshot)
    {
        var current = Volatile.Read(ref _snapshot);
        while (snapshot.Revision >= current.Revision)
        {
            var seen = Interlocked.CompareExchange(ref _snapshot, snapshot, current);
            if (ReferenceEquals(seen, current))
            {
                return;
            }

            current = seen;
        }
    }

    private async Task StateLoopAsync(CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            try
            {
                await StepAsync(stopping).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (stopping.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // One step failing (an index the engine refused, a report etcd did not take) must not
                // stop the node following the cluster: the next step tries again.
                _logger.LogWarning(e, "cluster step failed: {Error}", e.Message);
            }

            await Task.Delay(_options.PollInterval, stopping).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        }
    }

    private async Task StepAsync(CancellationToken stopping)
    {
        ClusterSnapshot snapshot;
        try
        {
            snapshot = await _etcd.ReadAsync(stopping).ConfigureAwait(false);
        }
        catch (ClusterUnavailableException e)
        {
            Unreachable(e);
            return;
        }

        _unreachableSince = null;
        _lastEtcdError = null;
        Advance(snapshot);
        CheckOwnRecord(snapshot);
        Reconcile(snapshot);
        Retire();
        await ReportAsync(snapshot, stopping).ConfigureAwait(false);
        await TrySwitchAsync(snapshot, stopping).ConfigureAwait(false);
    }

    // A member record under a lease this process never held: another process took the id.
    private void CheckOwnRecord(ClusterSnapshot snapshot)
    {
        if (snapshot.Members.TryGetValue(NodeId, out var record))
        {
            bool ours;
            lock (_leaseLock)
            {
                ours = _ownLeases.Contains(record.Lease);
            }

            if (!ours)
            {
                Displace(record);
            }
        }
    }

    // Every live generation of every cluster index has its local index, with its definition; generations
    // no longer named are retired: a cancelled pending one at once, a switched-out active one after the
    // grace. A local index whose definition is not its generation's is deleted and made again.
    private void Reconcile(ClusterSnapshot snapshot)
    {
        var local = _engine.ListIndexes().ToDictionary(s => s.Name, s => s.DefinitionHash, StringComparer.Ordinal);
        var now = Now;
        foreach (var (name, versioned) in snapshot.Indexes)
        {
            foreach (var generation in new[] { versioned.Index.Active, versioned.Index.Pending })
            {
                if (generation is null)
                {
                    continue;
                }

                var localName = LocalName(name, generation.Generation);
                try
                {
                    var definition = generation.Parse();
                    if (local.TryGetValue(localName, out var hash))
                    {
                        if (hash != definition.DefinitionHash && !_retiring.ContainsKey(localName))
                        {
                            _logger.LogWarning("index {Index}: local {Local} holds another definition than generation {Generation}'s; deleting it to build it again", name, localName, generation.Generation);
                            _retireAt[localName] = now;
                        }

                        continue;
                    }

                    if (_retiring.ContainsKey(localName))
                    {
                        continue;
                    }

                    _engine.DefineIndex(IndexDefinition.Create(localName, definition.Collection, definition.Fields));
                    _localErrors.TryRemove(localName, out _);
                    _logger.LogInformation("index {Index}: building generation {Generation} on this shard", name, generation.Generation);
                }
                catch (Exception e) when (e is IndexingException or ArgumentException)
                {
                    _localErrors[localName] = e.Message;
                }
            }
        }

        foreach (var name in local.Keys)
        {
            if (!TryParseLocalName(name, out var index, out var generation) || !snapshot.Indexes.TryGetValue(index, out var versioned))
            {
                continue;
            }

            var cluster = versioned.Index;
            if (generation == cluster.Active.Generation || generation == cluster.Pending?.Generation)
            {
                continue;
            }

            // Older than the active one: switched out, kept for the grace. Newer: a pending build the
            // definition replaced, of no use to any query.
            _retireAt.TryAdd(name, generation < cluster.Active.Generation ? now + (long)_options.RetireGrace.TotalMilliseconds : now);
        }
    }

    // Deletes retired generations beside the loops: the engine's delete waits for the queries still
    // reading the generation (up to its drain timeout) and cancels its build.
    private void Retire()
    {
        var now = Now;
        foreach (var (name, at) in _retireAt)
        {
            if (at > now || _retiring.ContainsKey(name))
            {
                continue;
            }

            _retiring[name] = Task.Run(async () =>
            {
                try
                {
                    await _engine.DeleteIndexAsync(name).ConfigureAwait(false);
                    _logger.LogInformation("retired local index {Index}", name);
                }
                catch (IndexingException e) when (e.Kind == IndexingErrorKind.IndexNotFound)
                {
                    // Already gone.
                }
                catch (Exception e) when (e is IndexingException or ObjectDisposedException)
                {
                    _logger.LogWarning("retiring local index {Index} failed: {Error}; trying again", name, e.Message);
                    return;
                }
                finally
                {
                    _retiring.TryRemove(name, out _);
                }

                _retireAt.TryRemove(name, out _);
            });
        }
    }

    // This shard's build of each index's newest generation, written to etcd when it is missing there
    // or changed (and every second while building, for the progress pages).
    private async Task ReportAsync(ClusterSnapshot snapshot, CancellationToken stopping)
    {
        var now = Now;
        foreach (var (name, versioned) in snapshot.Indexes)
        {
            var newest = versioned.Index.Newest;
            var report = Progress(name, newest.Generation, newest.Parse().DefinitionHash);
            var inEtcd = snapshot.ProgressOf(name).TryGetValue(NodeId, out var stored) ? stored.Progress : null;
            var due = inEtcd is null
                || inEtcd.Generation != report.Generation || inEtcd.DefinitionHash != report.DefinitionHash || inEtcd.Ready != report.Ready
                || inEtcd.Phase != report.Phase || inEtcd.Error != report.Error
                || (!report.Ready && (!_reportedAt.TryGetValue(name, out var last) || now - last >= 1000));
            if (!due)
            {
                continue;
            }

            await _etcd.PutProgressAsync(report, stopping).ConfigureAwait(false);
            _reportedAt[name] = now;
        }
    }

    private ShardProgress Progress(string index, int generation, string definitionHash)
    {
        var local = LocalName(index, generation);
        var at = DateTimeOffset.UtcNow;
        if (_localErrors.TryGetValue(local, out var error))
        {
            return new ShardProgress(NodeId, index, generation, null, false, "Failed", 0, 0, 0, error, at);
        }

        IndexSummary summary;
        try
        {
            summary = _engine.GetIndex(local);
        }
        catch (IndexingException e) when (e.Kind == IndexingErrorKind.IndexNotFound)
        {
            return new ShardProgress(NodeId, index, generation, null, false, "Defining", 0, 0, 0, null, at);
        }

        if (summary.DefinitionHash != definitionHash)
        {
            return new ShardProgress(NodeId, index, generation, summary.DefinitionHash, false, "Replacing", 0, 0, 0, null, at);
        }

        if (summary.Rebuild is { IsFinished: false } rebuild)
        {
            return new ShardProgress(
                NodeId, index, generation, summary.DefinitionHash, false, rebuild.Phase.ToString(), rebuild.DocumentsDone, rebuild.DocumentsTotal, summary.LagEtags, rebuild.Error, at);
        }

        var status = summary.Status;
        var failed = summary.Rebuild?.Phase is RebuildPhase.Failed || status.State is IndexState.Error;
        var ready = !failed && status.State is IndexState.Following or IndexState.Idle && !status.BuildInterrupted && summary.LagEtags <= _options.ReadyLagEtags;
        return new ShardProgress(
            NodeId, index, generation, summary.DefinitionHash, ready, failed ? "Failed" : ready ? "Ready" : "CatchingUp", status.DocumentCount, status.DocumentCount, summary.LagEtags,
            failed ? summary.Rebuild?.Error ?? status.LastError : null, at);
    }

    private async Task TrySwitchAsync(ClusterSnapshot snapshot, CancellationToken stopping)
    {
        foreach (var (name, versioned) in snapshot.Indexes)
        {
            if (versioned.Index.Pending is not { } pending)
            {
                continue;
            }

            var hash = pending.Parse().DefinitionHash;
            var reports = snapshot.ProgressOf(name);
            if (!Map.Nodes.All(node => reports.TryGetValue(node, out var report)
                && report.Progress.Generation == pending.Generation && report.Progress.DefinitionHash == hash && report.Progress.Ready))
            {
                continue;
            }

            var switched = versioned.Index with { Active = pending, Pending = null, SwitchedAt = DateTimeOffset.UtcNow };
            var stored = Map.Nodes.ToDictionary(node => node, node => reports[node].Stored, StringComparer.Ordinal);
            if (await _etcd.TrySwitchAsync(switched, versioned.ModRevision, stored, stopping).ConfigureAwait(false) is { } revision)
            {
                Interlocked.Increment(ref _switches);
                _logger.LogInformation(
                    "index {Index}: switched the cluster to generation {Generation} in one etcd transaction (revision {Revision}); every shard reported it ready",
                    name, pending.Generation, revision);
            }
        }
    }
}

/// <summary>What a definition change did (<see cref="ClusterNode.DefineAsync"/>).</summary>
public enum DefineResult
{
    /// <summary>A new index, generation 1.</summary>
    Created,

    /// <summary>The same definition as the newest generation: nothing changed.</summary>
    Unchanged,

    /// <summary>A pending generation, built on every shard beside the active one.</summary>
    RebuildStarted,

    /// <summary>A new pending generation in place of the one being built, which each shard cancels.</summary>
    RebuildReplaced,

    /// <summary>The active definition again: the pending generation is cancelled on every shard.</summary>
    RebuildCancelled,
}

/// <summary>A definition change's result and the index as etcd now holds it.</summary>
public sealed record DefineOutcome(DefineResult Result, ClusterIndex Index);
