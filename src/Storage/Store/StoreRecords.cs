namespace Indexing.Storage;

/// <summary>One row of the metadata scan: a live document's id, its etag and its exact stored size.</summary>
internal readonly record struct DocumentMetadata(string Id, long Etag, long SizeBytes);

/// <summary>A document body read under a snapshot (its etag comes from the metadata scan that planned the read).</summary>
internal readonly record struct DocumentBody(string Id, byte[] Body);

/// <summary>A document as the store holds it now: id, etag and JSON body.</summary>
public readonly record struct StoredDocument(string Id, long Etag, byte[] Body);

/// <summary>One entry of the change feed: the latest write to a document (a put, or a delete when <see cref="Deleted"/>).</summary>
internal readonly record struct ChangeEntry(long Etag, string Id, long SizeBytes, bool Deleted);

/// <summary>One document for <see cref="DocumentStore.PutMany"/>: its id and UTF-8 JSON body.</summary>
public readonly record struct DocumentWrite(string Id, ReadOnlyMemory<byte> Body);

/// <summary>What a bulk write stored: documents, body bytes, the etags it assigned, and how long it took.</summary>
public sealed record BulkWriteResult(long Documents, long Bytes, long FirstEtag, long LastEtag, TimeSpan Elapsed)
{
    /// <summary>Body megabytes (10^6 bytes) written per second.</summary>
    public double MegabytesPerSecond => Elapsed > TimeSpan.Zero ? Bytes / 1e6 / Elapsed.TotalSeconds : 0;
}

/// <summary>Thrown when RocksDB itself fails (I/O error, corruption, a closed store); wraps the engine's exception once.</summary>
/// <remarks>
/// Not sealed: <see cref="StoreFullException"/> is the one failure callers handle apart (a host answers
/// it as "insufficient storage", not as an internal error), and every existing
/// <c>catch (DocumentStoreException)</c> still sees it.
/// </remarks>
public class DocumentStoreException : IndexingException
{
    /// <summary>Creates the exception; <paramref name="message"/> names the operation and the document or range.</summary>
    public DocumentStoreException(string message, Exception? inner = null)
        : base(message, inner)
    {
    }
}

/// <summary>
/// A write refused because the store's volume is full (no space left on the device). Nothing of the
/// refused write was stored; every write acknowledged before it is. RocksDB refuses all writes from
/// then on, while reads go on, and resumes writes by itself once the volume has
/// <see cref="ResumeFreeBytes"/> free again (see <c>DocumentStore.Full.cs</c>).
/// </summary>
public sealed class StoreFullException : DocumentStoreException
{
    internal StoreFullException(string message, string storeDirectory, long? availableBytes, long resumeFreeBytes, Exception? inner)
        : base(message, inner)
    {
        StoreDirectory = storeDirectory;
        AvailableBytes = availableBytes;
        ResumeFreeBytes = resumeFreeBytes;
    }

    /// <summary>The store's directory (on the full volume).</summary>
    public string StoreDirectory { get; }

    /// <summary>Free bytes on the store's volume when the write was refused; null if the volume could not be asked.</summary>
    public long? AvailableBytes { get; }

    /// <summary>Free bytes RocksDB waits for before it resumes writes.</summary>
    public long ResumeFreeBytes { get; }
}

/// <summary>Whether the store accepts writes now; if not, since when and why.</summary>
/// <param name="Accepting">False while RocksDB refuses every write after a background error (a full volume) until it resumes.</param>
/// <param name="VolumeFull">True while writes are refused because the store's volume is full.</param>
/// <param name="RefusedSince">When this store first saw a write refused in the current spell; null while writes are accepted.</param>
/// <param name="Error">RocksDB's error for refused writes; null while writes are accepted.</param>
/// <param name="AvailableBytes">Free bytes on the store's volume now; null if the volume could not be asked.</param>
/// <param name="ResumeFreeBytes">Free bytes RocksDB waits for, after a full volume, before it resumes writes by itself.</param>
public sealed record StoreWriteStatus(bool Accepting, bool VolumeFull, DateTimeOffset? RefusedSince, string? Error, long? AvailableBytes, long ResumeFreeBytes);

/// <summary>What one purge round did: the watermark it read (null: none registered), tombstones purged, batches written, whether it compacted.</summary>
internal readonly record struct PurgeRound(long? Watermark, long Purged, int Batches, bool Compacted);

/// <summary>The persisted tombstone state: tombstones held, purged in all, and the etag every tombstone at or below which is gone.</summary>
internal readonly record struct TombstoneCounts(long Held, long Purged, long PurgedThroughEtag);

/// <summary>Tombstones of deleted documents: how many the store holds, how many it purged, and what holds the rest.</summary>
/// <param name="Held">Deleted documents whose tombstone (meta row and change entry) the store still holds.</param>
/// <param name="Purged">Tombstones purged since the store was created.</param>
/// <param name="PurgedThroughEtag">Every tombstone at or below this etag is gone.</param>
/// <param name="LowWatermark">
/// The low watermark the last purge round read from the owner of the indexes: tombstones above it
/// are held until every index has passed them. Null while nothing is registered (nothing is purged).
/// </param>
/// <param name="LockHold">How long purge batches held the writer lock over the last minute (count, p50, p90, p99, max).</param>
/// <param name="LongestLockHold">The longest a purge batch held the writer lock since the store opened.</param>
/// <param name="Error">Why the last purge round failed; null once a round succeeds.</param>
public sealed record TombstoneStatus(long Held, long Purged, long PurgedThroughEtag, long? LowWatermark, LatencySummary LockHold, TimeSpan LongestLockHold, string? Error);
