namespace Indexing.Cluster;

/// <summary>How a node joins a cluster (<c>serve --cluster</c>; the <c>Cluster:*</c> settings).</summary>
public sealed record ClusterOptions
{
    /// <summary>etcd's client URLs, comma-separated (e.g. http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379).</summary>
    public required string Endpoints { get; init; }

    /// <summary>This node's id, as the shard map names it (<see cref="NodeIds.Rule"/>).</summary>
    public required string NodeId { get; init; }

    /// <summary>The prefix of every key the cluster keeps in etcd; several clusters can share one etcd under different prefixes.</summary>
    public string Prefix { get; init; } = ClusterKeys.DefaultPrefix;

    /// <summary>
    /// The node's lease in etcd (whole seconds, 2 s to 1 min). It is renewed every third of it; a node
    /// that could not renew it for this long (cut off from etcd) stops accepting writes, and the other
    /// nodes see it as down once etcd expires it.
    /// </summary>
    public TimeSpan LeaseTtl { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>How often the node reads the cluster's state from etcd (50 ms to 10 s).</summary>
    public TimeSpan PollInterval { get; init; } = TimeSpan.FromMilliseconds(250);

    /// <summary>How long a call to etcd may take before it counts as unavailable (100 ms to 30 s).</summary>
    public TimeSpan EtcdTimeout { get; init; } = TimeSpan.FromSeconds(2);

    /// <summary>
    /// How long a shard keeps the generation a switch retired, for queries that read the cluster state
    /// before the switch (0 s to 1 h). A query that still asks for it afterwards is retried by its
    /// coordinator on the new generation, whole.
    /// </summary>
    public TimeSpan RetireGrace { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// How far behind the store (in etags) a shard's new generation may be and still report ready: its
    /// catch-up goes on after the switch, as a single node's swap allows (0 or more).
    /// </summary>
    public long ReadyLagEtags { get; init; } = 1000;

    /// <summary>Throws <see cref="ArgumentException"/> naming each setting that breaks its rule.</summary>
    public ClusterOptions Validate()
    {
        var problems = new List<string>();
        if (string.IsNullOrWhiteSpace(Endpoints) || Endpoints.Split(',').Any(e => !Uri.TryCreate(e.Trim(), UriKind.Absolute, out var uri) || uri.Scheme is not ("http" or "https")))
        {
            problems.Add($"Cluster:Endpoints is {MessageText.Quote(Endpoints ?? string.Empty)}; give etcd's client URLs, comma-separated (e.g. http://127.0.0.1:2379,http://127.0.0.1:22379).");
        }

        if (!NodeIds.IsValid(NodeId, out var nodeProblem))
        {
            problems.Add($"Cluster:NodeId: {nodeProblem}");
        }

        if (string.IsNullOrEmpty(Prefix) || !Prefix.StartsWith('/'))
        {
            problems.Add($"Cluster:Prefix is {MessageText.Quote(Prefix ?? string.Empty)}; it must start with '/' (e.g. {ClusterKeys.DefaultPrefix}).");
        }

        if (LeaseTtl < TimeSpan.FromSeconds(2) || LeaseTtl > TimeSpan.FromMinutes(1) || LeaseTtl.Ticks % TimeSpan.TicksPerSecond != 0)
        {
            problems.Add($"Cluster:LeaseTtl is {LeaseTtl}; it must be whole seconds from 2 s to 1 min.");
        }

        Check(PollInterval, TimeSpan.FromMilliseconds(50), TimeSpan.FromSeconds(10), "Cluster:PollInterval", problems);
        Check(EtcdTimeout, TimeSpan.FromMilliseconds(100), TimeSpan.FromSeconds(30), "Cluster:EtcdTimeout", problems);
        Check(RetireGrace, TimeSpan.Zero, TimeSpan.FromHours(1), "Cluster:RetireGrace", problems);
        if (ReadyLagEtags < 0)
        {
            problems.Add($"Cluster:ReadyLagEtags is {ReadyLagEtags}; it must be 0 or more.");
        }

        return problems.Count == 0 ? this : throw new ArgumentException(string.Join(" ", problems));
    }

    private static void Check(TimeSpan value, TimeSpan min, TimeSpan max, string name, List<string> problems)
    {
        if (value < min || value > max)
        {
            problems.Add($"{name} is {value}; it must be from {min} to {max}.");
        }
    }
}
