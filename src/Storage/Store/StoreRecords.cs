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
/// Not sealed: a full volume is the one failure callers handle apart (<see cref="IndexingErrorKind.StoreFull"/>;
/// a host answers it as "insufficient storage", not as an internal error); the store's status shows
/// its figures (<see cref="StoreStatus.VolumeFull"/>, <see cref="StoreStatus.AvailableBytes"/>).
/// </remarks>
public class DocumentStoreException : IndexingException
{
    /// <summary>Creates the exception; <paramref name="message"/> names the operation and the document or range.</summary>
    internal DocumentStoreException(string message, Exception? inner = null)
        : this(IndexingErrorKind.Failure, message, inner)
    {
    }

    private protected DocumentStoreException(IndexingErrorKind kind, string message, Exception? inner)
        : base(kind, message, inner)
    {
    }
}

/// <summary>
/// A write refused because the store's volume is full (no space left on the device). Nothing of the
/// refused write was stored; every write acknowledged before it is. RocksDB refuses all writes from
/// then on, while reads go on, and resumes writes by itself once the volume has
/// <see cref="ResumeFreeBytes"/> free again (see <c>DocumentStore.Full.cs</c>).
/// </summary>
internal sealed class StoreFullException : DocumentStoreException
{
    internal StoreFullException(string message, string storeDirectory, long? availableBytes, long resumeFreeBytes, Exception? inner)
        : base(IndexingErrorKind.StoreFull, message, inner)
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
internal sealed record StoreWriteStatus(bool Accepting, bool VolumeFull, DateTimeOffset? RefusedSince, string? Error, long? AvailableBytes, long ResumeFreeBytes);

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
internal sealed record TombstoneStatus(long Held, long Purged, long PurgedThroughEtag, long? LowWatermark, LatencySummary LockHold, TimeSpan LongestLockHold, string? Error);

/// <summary>Hits and misses of a cache since the store opened.</summary>
internal readonly record struct CacheCounts(long Hits, long Misses)
{
    /// <summary>Hits over lookups; null with no lookup.</summary>
    public double? HitRate => Hits + Misses > 0 ? (double)Hits / (Hits + Misses) : null;

    /// <summary>The counts since <paramref name="earlier"/>.</summary>
    public CacheCounts Since(CacheCounts earlier) => new(Hits - earlier.Hits, Misses - earlier.Misses);
}

/// <summary>What RocksDB holds in memory now, and how its caches served reads since the store opened.</summary>
/// <param name="BlockCacheUsageBytes">Bytes in the block cache (data, index and filter blocks).</param>
/// <param name="BlockCachePinnedBytes">Block cache bytes pinned by readers (in use, not evictable); part of the usage.</param>
/// <param name="BlockCacheCapacityBytes">The block cache's size (StoreOptions.BlockCacheBytes).</param>
/// <param name="RowCacheUsageBytes">Bytes in the row cache.</param>
/// <param name="RowCacheCapacityBytes">The row cache's size (StoreOptions.RowCacheBytes; 0: none).</param>
/// <param name="MemtableBytes">Bytes in memtables over all column families (rocksdb.cur-size-all-mem-tables).</param>
/// <param name="MemtableLimitBytes">The most memtables can hold: each family's write buffer size times the buffers it may have.</param>
/// <param name="TableReadersBytes">Memory of open SST readers outside the block cache (rocksdb.estimate-table-readers-mem).</param>
/// <param name="ForegroundBlockCache">Block cache hits and misses of foreground Gets alone (RocksDB's perf context).</param>
/// <param name="AllReadsBlockCache">Block cache hits and misses of every read (statistics tickers), rebuild scans included.</param>
/// <param name="RowCache">Row cache hits and misses (statistics tickers; point reads only).</param>
/// <param name="FileBytesRead">
/// Bytes read from SST and blob files since the store opened, readahead included (the statistics
/// tickers of the last level and the levels above it, which count the blob files too, where
/// documents of <see cref="DocumentStore.MinBlobBytes"/> and more live): what reads cost the
/// device. Over the bytes the reads returned, it is their read amplification.
/// </param>
internal sealed record StoreMemory(
    long BlockCacheUsageBytes,
    long BlockCachePinnedBytes,
    long BlockCacheCapacityBytes,
    long RowCacheUsageBytes,
    long RowCacheCapacityBytes,
    long MemtableBytes,
    long MemtableLimitBytes,
    long TableReadersBytes,
    CacheCounts ForegroundBlockCache,
    CacheCounts AllReadsBlockCache,
    CacheCounts RowCache,
    long FileBytesRead);

/// <summary>The store's state as an operator reads it: RocksDB's estimates and the handles open now.</summary>
/// <param name="Path">The store's directory.</param>
/// <param name="LastEtag">Etag of the latest write.</param>
/// <param name="EstimatedDocuments">RocksDB's estimate of keys in <c>docs</c> (rocksdb.estimate-num-keys; approximate).</param>
/// <param name="EstimatedLiveDataBytes">RocksDB's estimate of live data over all column families.</param>
/// <param name="LiveSstFilesBytes">Size of the SST files in use.</param>
/// <param name="LiveBlobFilesBytes">Size of the blob files in use: the documents of <see cref="DocumentStore.MinBlobBytes"/> and more, stored apart from the SST files.</param>
/// <param name="BlobGarbageBytes">Bytes of those blob files that no document uses any more (deleted or replaced), until compaction's blob garbage collection reclaims them.</param>
/// <param name="MemtableBytes">Bytes in memtables (written, not yet flushed).</param>
/// <param name="BlockCacheUsageBytes">Bytes the block cache holds now.</param>
/// <param name="BlockCacheCapacityBytes">The block cache's size (StoreOptions.BlockCacheBytes).</param>
/// <param name="OpenSnapshots">Snapshots not yet disposed.</param>
/// <param name="OpenIterators">Iterators not yet disposed (scans in progress).</param>
/// <param name="TombstonesHeld">Deleted documents whose tombstone (meta row and change entry) the store still holds.</param>
/// <param name="TombstonesPurged">Tombstones purged since the store was created.</param>
/// <param name="TombstonesPurgedThroughEtag">Every tombstone at or below this etag is gone.</param>
/// <param name="TombstoneLowWatermark">
/// The low watermark the last purge round read from the indexes: tombstones above it are held until
/// every index has passed them. Null while no index is registered (nothing is purged).
/// </param>
/// <param name="TombstonePurgeLockHoldP99">The 99th percentile of how long purge batches held the writer lock over the last minute.</param>
/// <param name="TombstonePurgeLongestLockHold">The longest a purge batch held the writer lock since the store opened.</param>
/// <param name="TombstonePurgeError">Why the last purge round failed; null once a round succeeds.</param>
/// <param name="WritesAccepted">False while RocksDB refuses every write after a background error (a full volume) until it resumes.</param>
/// <param name="VolumeFull">True while writes are refused because the store's volume is full.</param>
/// <param name="WritesRefusedSince">When the store first saw a write refused in the current spell; null while writes are accepted.</param>
/// <param name="WriteError">RocksDB's error for refused writes; null while writes are accepted.</param>
/// <param name="AvailableBytes">Free bytes on the store's volume now; null if the volume could not be asked.</param>
/// <param name="ResumeFreeBytes">Free bytes RocksDB waits for, after a full volume, before it resumes writes by itself.</param>
/// <param name="Options">The effective store configuration.</param>
/// <param name="RocksDbStats">RocksDB's own multi-line report (rocksdb.stats): compaction, stalls, per-level sizes.</param>
public sealed record StoreStatus(
    string Path,
    long LastEtag,
    long EstimatedDocuments,
    long EstimatedLiveDataBytes,
    long LiveSstFilesBytes,
    long LiveBlobFilesBytes,
    long BlobGarbageBytes,
    long MemtableBytes,
    long BlockCacheUsageBytes,
    long BlockCacheCapacityBytes,
    int OpenSnapshots,
    int OpenIterators,
    long TombstonesHeld,
    long TombstonesPurged,
    long TombstonesPurgedThroughEtag,
    long? TombstoneLowWatermark,
    TimeSpan TombstonePurgeLockHoldP99,
    TimeSpan TombstonePurgeLongestLockHold,
    string? TombstonePurgeError,
    bool WritesAccepted,
    bool VolumeFull,
    DateTimeOffset? WritesRefusedSince,
    string? WriteError,
    long? AvailableBytes,
    long ResumeFreeBytes,
    string Options,
    string RocksDbStats);
