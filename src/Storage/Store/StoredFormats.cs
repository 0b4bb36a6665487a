using System.Buffers.Binary;
using System.Text;

namespace Indexing.Storage;

// The byte layout of the `meta` and `changes` column families, in one place.
//   meta:    key = id (UTF-8)   value = etag (8, big-endian) | size (8, big-endian) | flags (1)
//   changes: key = etag (8, big-endian, so key order is etag order)
//            value = flags (1) | size (8, big-endian) | id (UTF-8)
//            key = etag 0 (never issued: etags start at 1) holds the tombstone state instead:
//            value = held (8) | purged (8) | purged through etag (8), big-endian
// Flag bit 0 marks a deletion. A deleted document keeps a meta row (a tombstone) so that a later
// put of the same id finds, and removes, the delete's change entry: one live entry per document.
// The tombstone state is written in the same WriteBatch as every write that changes it (a delete,
// a put over a tombstone, a purge batch), so it always agrees with the rows it counts. It lives in
// `changes` because every write goes there: a column family written only now and then would keep
// old write-ahead log files alive until it is flushed. No reader sees it: the change feed is read
// from etag 1 up, and the last etag is recovered from the last key.
internal static class StoredFormats
{
    public const int MetaLength = 17;
    public const int EtagLength = 8;
    public const int TombstoneStateLength = 24;
    private const byte DeletedFlag = 1;

    public static ReadOnlySpan<byte> TombstoneStateKey => [0, 0, 0, 0, 0, 0, 0, 0];

    public static byte[] Meta(long etag, long size, bool deleted)
    {
        var value = new byte[MetaLength];
        BinaryPrimitives.WriteInt64BigEndian(value, etag);
        BinaryPrimitives.WriteInt64BigEndian(value.AsSpan(8), size);
        value[16] = deleted ? DeletedFlag : (byte)0;
        return value;
    }

    public static (long Etag, long Size, bool Deleted) ReadMeta(ReadOnlySpan<byte> value)
    {
        if (value.Length != MetaLength)
        {
            throw new InvalidDataException($"a meta row is {value.Length} bytes; it must be {MetaLength}. The store is corrupt or was written by something else.");
        }

        return (BinaryPrimitives.ReadInt64BigEndian(value), BinaryPrimitives.ReadInt64BigEndian(value[8..]), (value[16] & DeletedFlag) != 0);
    }

    public static byte[] TombstoneState(TombstoneCounts counts)
    {
        var value = new byte[TombstoneStateLength];
        BinaryPrimitives.WriteInt64BigEndian(value, counts.Held);
        BinaryPrimitives.WriteInt64BigEndian(value.AsSpan(8), counts.Purged);
        BinaryPrimitives.WriteInt64BigEndian(value.AsSpan(16), counts.PurgedThroughEtag);
        return value;
    }

    public static TombstoneCounts ReadTombstoneState(ReadOnlySpan<byte> value) =>
        value.Length == TombstoneStateLength
            ? new TombstoneCounts(BinaryPrimitives.ReadInt64BigEndian(value), BinaryPrimitives.ReadInt64BigEndian(value[8..]), BinaryPrimitives.ReadInt64BigEndian(value[16..]))
            : throw new InvalidDataException($"the tombstone state is {value.Length} bytes; it must be {TombstoneStateLength}. The store is corrupt or was written by something else.");

    public static byte[] EtagKey(long etag)
    {
        var key = new byte[EtagLength];
        BinaryPrimitives.WriteInt64BigEndian(key, etag);
        return key;
    }

    public static long ReadEtagKey(ReadOnlySpan<byte> key) =>
        key.Length == EtagLength
            ? BinaryPrimitives.ReadInt64BigEndian(key)
            : throw new InvalidDataException($"a change key is {key.Length} bytes; it must be {EtagLength}. The store is corrupt or was written by something else.");

    public static byte[] Change(byte[] idKey, long size, bool deleted)
    {
        var value = new byte[9 + idKey.Length];
        value[0] = deleted ? DeletedFlag : (byte)0;
        BinaryPrimitives.WriteInt64BigEndian(value.AsSpan(1), size);
        idKey.CopyTo(value.AsSpan(9));
        return value;
    }

    // The purge looks at many change entries and keeps only the deletions: no id string for the others.
    public static bool IsDeletedChange(ReadOnlySpan<byte> value) => value.Length >= 10 && (value[0] & DeletedFlag) != 0;

    public static byte[] ChangeIdKey(ReadOnlySpan<byte> value) => value[9..].ToArray();

    public static ChangeEntry ReadChange(long etag, ReadOnlySpan<byte> value)
    {
        if (value.Length < 10)
        {
            throw new InvalidDataException($"the change entry for etag {etag} is {value.Length} bytes; it must be at least 10. The store is corrupt.");
        }

        return new ChangeEntry(etag, DocumentIds.FromKey(value[9..]), BinaryPrimitives.ReadInt64BigEndian(value[1..]), (value[0] & DeletedFlag) != 0);
    }

    // The smallest key after every id of the collection: "orders/" -> "orders0" ('0' follows '/').
    // Null for "no collection filter".
    public static byte[]? CollectionPrefix(string? collection)
    {
        if (collection is null)
        {
            return null;
        }

        DocumentIds.ValidateCollection(collection);
        return Encoding.UTF8.GetBytes(collection + "/");
    }
}
