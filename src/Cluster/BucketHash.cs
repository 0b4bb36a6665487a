using System.IO.Hashing;
using System.Text;

namespace Indexing.Cluster;

/// <summary>
/// The bucket of a document id: XxHash3 (64 bits, seed 0) of the id's UTF-8 bytes, modulo the map's
/// bucket count. Stable across processes, machines and releases (the hash is specified, not
/// <see cref="string.GetHashCode()"/>), which the shard map depends on.
/// </summary>
public static class BucketHash
{
    /// <summary>The bucket, in [0, <paramref name="buckets"/>), of <paramref name="id"/>.</summary>
    public static int Of(string id, int buckets)
    {
        ArgumentNullException.ThrowIfNull(id);
        ArgumentOutOfRangeException.ThrowIfLessThan(buckets, 1);
        var bytes = Encoding.UTF8.GetBytes(id);
        return (int)(XxHash3.HashToUInt64(bytes) % (ulong)buckets);
    }
}
