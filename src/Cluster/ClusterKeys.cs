namespace Indexing.Cluster;

/// <summary>
/// Where the cluster keeps its state in etcd, under one prefix (default <c>/indexing/</c>):
/// <c>map</c> (the shard map), <c>members/&lt;node&gt;</c> (leased), <c>indexes/&lt;name&gt;</c> (definitions
/// and generations) and <c>progress/&lt;index&gt;/&lt;node&gt;</c> (each shard's build of the newest generation).
/// Nothing else stores cluster state.
/// </summary>
public sealed class ClusterKeys
{
    /// <summary>The default prefix.</summary>
    public const string DefaultPrefix = "/indexing/";

    /// <summary>Keys under <paramref name="prefix"/> (ends with '/').</summary>
    public ClusterKeys(string prefix = DefaultPrefix)
    {
        ArgumentException.ThrowIfNullOrEmpty(prefix);
        Prefix = prefix.EndsWith('/') ? prefix : prefix + "/";
    }

    public string Prefix { get; }

    public string Map => Prefix + "map";

    public string MembersPrefix => Prefix + "members/";

    public string IndexesPrefix => Prefix + "indexes/";

    public string ProgressPrefix => Prefix + "progress/";

    public string Member(string node) => MembersPrefix + node;

    public string Index(string name) => IndexesPrefix + name;

    public string Progress(string index, string node) => ProgressPrefix + index + "/" + node;
}
