using System.Collections.Immutable;
using System.Text.Json;
using System.Text.Json.Serialization;
using Indexing.Indexer;

namespace Indexing.Cluster;

/// <summary>A node's membership record, <c>members/&lt;node&gt;</c>, attached to the node's lease: it is there exactly while the lease lives.</summary>
/// <param name="Node">The node's id.</param>
/// <param name="Url">Where other nodes reach its HTTP API (e.g. http://127.0.0.1:5081/).</param>
/// <param name="Lease">The etcd lease the record is attached to.</param>
public sealed record MemberRecord(string Node, string Url, long Lease);

/// <summary>One generation of a cluster index: its number and its definition, the same on every shard.</summary>
/// <param name="Generation">1 for the first definition, one more for each change.</param>
/// <param name="Definition">The definition (<see cref="IndexDefinition.ToJson"/>), named with the cluster index's name.</param>
public sealed record IndexGeneration(int Generation, JsonElement Definition)
{
    /// <summary>The definition, parsed.</summary>
    public IndexDefinition Parse() => IndexDefinition.Parse(Definition.GetRawText());
}

/// <summary>
/// A cluster index, <c>indexes/&lt;name&gt;</c>: the generation every query reads (<paramref name="Active"/>)
/// and the one being built on every shard to replace it (<paramref name="Pending"/>, null when none).
/// The switch from one to the other is one etcd transaction on this key (<see cref="EtcdCoordinator.TrySwitchAsync"/>).
/// </summary>
/// <param name="LastGeneration">
/// The highest generation number ever given (a cancelled pending generation included): the next change
/// gets one more, so a number never names two definitions, even for a shard that missed a change.
/// </param>
public sealed record ClusterIndex(string Name, IndexGeneration Active, IndexGeneration? Pending, DateTimeOffset? SwitchedAt, int LastGeneration = 0)
{
    /// <summary>The newest generation named: the pending one, else the active one.</summary>
    [JsonIgnore]
    public IndexGeneration Newest => Pending ?? Active;

    /// <summary>The number the next generation gets.</summary>
    [JsonIgnore]
    public int NextGeneration => Math.Max(LastGeneration, Newest.Generation) + 1;
}

/// <summary>
/// What a shard reports of one generation of an index, <c>progress/&lt;index&gt;/&lt;node&gt;</c>:
/// <paramref name="Ready"/> once its local index of that generation is built and following the store.
/// The switch compares these values, so a report that changed since the switcher read it fails the switch.
/// </summary>
/// <param name="DefinitionHash">The definition the shard's local index of that generation holds; the switch requires the pending one's.</param>
public sealed record ShardProgress(
    string Node,
    string Index,
    int Generation,
    string? DefinitionHash,
    bool Ready,
    string Phase,
    long DocumentsDone,
    long DocumentsTotal,
    long LagEtags,
    string? Error,
    DateTimeOffset At);

/// <summary>The cluster's state as one etcd read saw it (one revision), with what the switch compares.</summary>
public sealed record ClusterSnapshot(
    long Revision,
    ShardMap? Map,
    ImmutableDictionary<string, MemberRecord> Members,
    ImmutableDictionary<string, VersionedIndex> Indexes,
    ImmutableDictionary<string, ImmutableDictionary<string, VersionedProgress>> Progress,
    DateTimeOffset ReadAt)
{
    /// <summary>A snapshot of nothing, before the first read.</summary>
    public static ClusterSnapshot Empty { get; } = new(
        0, null, ImmutableDictionary<string, MemberRecord>.Empty, ImmutableDictionary<string, VersionedIndex>.Empty,
        ImmutableDictionary<string, ImmutableDictionary<string, VersionedProgress>>.Empty, DateTimeOffset.MinValue);

    /// <summary>Whether <paramref name="node"/> holds a live lease (its member record is there).</summary>
    public bool IsAlive(string node) => Members.ContainsKey(node);

    /// <summary>The progress reports of <paramref name="index"/>, by node (empty when none).</summary>
    public ImmutableDictionary<string, VersionedProgress> ProgressOf(string index) =>
        Progress.TryGetValue(index, out var reports) ? reports : ImmutableDictionary<string, VersionedProgress>.Empty;
}

/// <summary>A cluster index with the etcd revision its key was last changed at (what a compare-and-swap compares).</summary>
public sealed record VersionedIndex(ClusterIndex Index, long ModRevision);

/// <summary>A progress report with its stored bytes (what the switch compares, byte for byte).</summary>
public sealed record VersionedProgress(ShardProgress Progress, byte[] Stored);

/// <summary>The JSON of every record in etcd: camelCase, enums as strings.</summary>
internal static class ClusterJson
{
    public static readonly JsonSerializerOptions Options = new(JsonSerializerDefaults.Web)
    {
        Converters = { new JsonStringEnumConverter() },
    };

    public static byte[] Serialize<T>(T value) => JsonSerializer.SerializeToUtf8Bytes(value, Options);

    public static T Deserialize<T>(ReadOnlySpan<byte> utf8, string key) =>
        JsonSerializer.Deserialize<T>(utf8, Options) ?? throw new InvalidDataException($"etcd key {MessageText.Quote(key)} holds null; it should hold a {typeof(T).Name}.");
}
