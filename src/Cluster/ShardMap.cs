using System.Collections.Immutable;

namespace Indexing.Cluster;

/// <summary>
/// Which node owns each bucket. A document's bucket is <see cref="BucketHash.Of"/> of its id; the map
/// is written to etcd once, when the cluster is created (<c>indexing cluster init</c>), and never
/// changes (moving buckets is resharding, which this version does not do: docs/cluster.md).
/// </summary>
/// <param name="Buckets">How many buckets the id space is cut into (1 to <see cref="MaxBuckets"/>).</param>
/// <param name="Nodes">The nodes, by id, in the order the owners index them.</param>
/// <param name="Owners">For each bucket, the index in <paramref name="Nodes"/> of its owner.</param>
public sealed record ShardMap(int Buckets, ImmutableArray<string> Nodes, ImmutableArray<int> Owners)
{
    /// <summary>The most buckets a map may have.</summary>
    public const int MaxBuckets = 4096;

    /// <summary>The default bucket count: many more buckets than nodes, so that a future resharding moves buckets, not documents one by one.</summary>
    public const int DefaultBuckets = 64;

    /// <summary>A map of <paramref name="buckets"/> buckets dealt round robin over <paramref name="nodes"/>.</summary>
    /// <exception cref="ArgumentException">A node id breaks <see cref="NodeIds.Rule"/>, is given twice, or there are more nodes than buckets.</exception>
    public static ShardMap RoundRobin(IReadOnlyList<string> nodes, int buckets = DefaultBuckets)
    {
        ArgumentNullException.ThrowIfNull(nodes);
        var map = new ShardMap(buckets, [.. nodes], [.. Enumerable.Range(0, buckets).Select(b => nodes.Count == 0 ? 0 : b % nodes.Count)]);
        map.Validate();
        return map;
    }

    /// <summary>The owner of <paramref name="id"/>'s bucket.</summary>
    public string OwnerOf(string id) => Nodes[Owners[BucketHash.Of(id, Buckets)]];

    /// <summary>The buckets <paramref name="node"/> owns.</summary>
    public IEnumerable<int> BucketsOf(string node)
    {
        var index = Nodes.IndexOf(node);
        return Enumerable.Range(0, Buckets).Where(b => Owners[b] == index);
    }

    /// <summary>Throws <see cref="ArgumentException"/> naming what is wrong (a map read from etcd is checked the same way).</summary>
    public void Validate()
    {
        if (Buckets is < 1 or > MaxBuckets)
        {
            throw new ArgumentException($"the shard map has {Buckets} buckets; it must have 1 to {MaxBuckets}.");
        }

        if (Nodes.IsDefaultOrEmpty)
        {
            throw new ArgumentException("the shard map names no node; give at least one (e.g. --nodes n1,n2,n3).");
        }

        foreach (var node in Nodes)
        {
            if (!NodeIds.IsValid(node, out var problem))
            {
                throw new ArgumentException(problem);
            }
        }

        if (Nodes.Distinct(StringComparer.Ordinal).Count() != Nodes.Length)
        {
            throw new ArgumentException($"the shard map names a node twice ({string.Join(", ", Nodes)}); each node once.");
        }

        if (Nodes.Length > Buckets)
        {
            throw new ArgumentException($"the shard map has {Nodes.Length} nodes and {Buckets} buckets; a node without a bucket holds nothing, so give at least as many buckets as nodes.");
        }

        if (Owners.IsDefault || Owners.Length != Buckets || Owners.Any(o => o < 0 || o >= Nodes.Length))
        {
            throw new ArgumentException($"the shard map's owners must name a node (0 to {Nodes.Length - 1}) for each of its {Buckets} buckets.");
        }
    }
}

/// <summary>The rule for node ids: they name etcd keys and appear in messages.</summary>
public static class NodeIds
{
    /// <summary>The rule, as messages state it.</summary>
    public const string Rule = "a node id is 1 to 32 characters from a-z, 0-9, '_' and '-', starting with a letter or digit";

    /// <summary>Whether <paramref name="id"/> follows <see cref="Rule"/>; <paramref name="problem"/> says why not.</summary>
    public static bool IsValid(string? id, out string? problem)
    {
        problem = null;
        if (string.IsNullOrEmpty(id) || id.Length > 32 || !char.IsAsciiLetterOrDigit(id[0]) ||
            id.Any(c => !(char.IsAsciiLetterLower(c) || char.IsAsciiDigit(c) || c is '_' or '-')))
        {
            problem = $"node id {MessageText.Quote(id ?? string.Empty)} is not valid; {Rule} (e.g. n1).";
            return false;
        }

        return true;
    }
}
