using System.Diagnostics;
using RocksDbSharp;

namespace Indexing.Storage;

// Tombstone cleanup. A delete leaves a tombstone: its meta row (deleted flag) and its change entry,
// so that readers of the change feed see the delete. Once every reader has durably applied it, it
// is garbage. The store does not know its readers (Storage knows nothing of indexes): whoever owns
// them registers a low watermark L (RegisterTombstoneWatermark): nothing will ever again read the
// change feed at or below L. With no registration nothing is purged; with several, the lowest rules.
//
// A purge round (one at a time: _purgeLock; the background thread and the registrations are
// TombstonePurgeThread's) reads L, caps it at the last etag, and walks the change feed from a
// persisted cursor ("purged through" P: every tombstone at or below P is gone) up to it, in
// batches. A batch finds up to BatchTombstones deletions among at most BatchScanEntries change
// entries without any lock, then takes the store's writer lock once: it
// checks each tombstone again (a put or delete of the same id since the scan replaced it and
// removed its change entry itself; the purge must then leave the id alone), deletes the meta row
// and the change entry of the ones that are still tombstones, and writes the new counts and cursor,
// all in one WriteBatch. A crash between batches leaves a consistent store and a cursor to go on
// from. The batch is not synced: losing it in a power cut only brings the tombstones back, and any
// later synced write syncs it too (the write-ahead log is one sequence).
//
// Etags are never issued twice: the last etag is recovered on open as the larger of the change
// feed's last key and the cursor, so purging the newest change entry is safe.
//
// A purged meta row leaves a RocksDB delete marker that a scan still steps over until compaction.
// The compact-on-deletion collector (StoreTuning) marks SST files dense with them for RocksDB's own
// compaction; and once a round has purged many (CompactionFloor, or an eighth of the
// documents), the purged key range of meta is compacted (not exclusively: RocksDB's automatic
// compactions go on meanwhile), which flushes the memtable and drops the markers.

/// <summary>
/// A <see cref="DocumentStore"/>'s tombstone cleanup: the tombstone counts and purge cursor (persisted
/// at etag 0 of <c>changes</c>), the purge rounds, and the compaction of the purged key range.
/// </summary>
/// <remarks>
/// Threading: one round at a time (its own lock), from the store's purge thread or a caller; a
/// batch takes the store's write lock, which also guards the counts the store's writes change
/// (<see cref="SetHeld"/>, <see cref="AddState"/>); status reads them with Volatile.
/// </remarks>
internal sealed class TombstonePurger : IDisposable
{
    /// <summary>Most tombstones one purge batch removes, i.e. per hold of the writer lock.</summary>
    public const int BatchTombstones = 256;

    /// <summary>Most change entries one purge batch looks at, so that a batch over a stretch of live entries ends too.</summary>
    public const int BatchScanEntries = 8192;

    /// <summary>Fewest tombstones purged since the last compaction of their key range before the next one.</summary>
    public const long CompactionFloor = 10_000;

    // RocksDB's BottommostLevelCompaction::kForceOptimized.
    private const byte BottommostForceOptimized = 3;

    private readonly DocumentStore _store;
    private readonly Lock _purgeLock = new();
    private readonly WriteOptions _purgeWriteOptions = new WriteOptions().SetSync(false);
    private IntPtr _compactOptions;

    // Under the store's write lock for writes; read without it (Volatile) for status.
    private long _tombstonesHeld;
    private long _tombstonesPurged;
    private long _purgedThroughEtag;

    private readonly LatencyHistogram _purgeLockHold = new();
    private long _lastWatermark = -1;
    private long _longestPurgeLockTicks;
    private string? _purgeError;

    // The key range of meta purged since its last compaction, and how many (purge round only).
    private byte[]? _purgedLow;
    private byte[]? _purgedHigh;
    private long _purgedSinceCompaction;

    /// <summary>
    /// Recovers the tombstone state of <paramref name="store"/>, whose database is open and whose
    /// column families are known (on open: nothing else runs yet).
    /// </summary>
    public TombstonePurger(DocumentStore store)
    {
        _store = store;
        var counts = RecoverTombstoneState();
        _tombstonesHeld = counts.Held;
        _tombstonesPurged = counts.Purged;
        _purgedThroughEtag = counts.PurgedThroughEtag;
        // Last: a failed recovery leaves nothing native to free.
        _compactOptions = CreateCompactOptions();
    }

    /// <summary>Test hook: called after each purge batch is written, with its number in the round (1, 2, ...); it may throw or block.</summary>
    public Action<int>? BatchWritten { get; set; }

    /// <summary>Test hook: called between a purge batch's scan and its taking the writer lock (a concurrent write goes here).</summary>
    public Action? BeforeLock { get; set; }

    /// <summary>Tombstones held now. Written under the store's write lock (<see cref="SetHeld"/>); read from any thread.</summary>
    public long Held => Volatile.Read(ref _tombstonesHeld);

    /// <summary>Every tombstone at or below this etag is gone.</summary>
    public long PurgedThroughEtag => Volatile.Read(ref _purgedThroughEtag);

    /// <summary>
    /// Runs one purge round now, on the caller's thread (the background thread runs the same): every
    /// tombstone at or below the low watermark <paramref name="readWatermark"/> returns (null: none
    /// registered, nothing purged) goes, in batches. Returns what it did.
    /// </summary>
    public PurgeRound Purge(Func<long?> readWatermark, CancellationToken cancellationToken = default)
    {
        lock (_purgeLock)
        {
            // The last etag is read before the watermark: a reader that registers its hold after the
            // watermark was read (a rebuild admitted from the queue, taking its snapshot then) reads
            // from an etag at or above this one, so nothing it may still need is purged.
            var lastEtag = _store.LastEtag;
            if (readWatermark() is not { } watermark)
            {
                Volatile.Write(ref _lastWatermark, -1);
                return new PurgeRound(null, 0, 0, Compacted: false);
            }

            Volatile.Write(ref _lastWatermark, watermark);
            var upTo = Math.Min(watermark, lastEtag);
            long purged = 0;
            var batches = 0;
            while (Volatile.Read(ref _purgedThroughEtag) < upTo)
            {
                cancellationToken.ThrowIfCancellationRequested();
                purged += PurgeBatch(upTo);
                batches++;
                BatchWritten?.Invoke(batches);
            }

            var compacted = CompactPurgedRangeIfDue();
            Volatile.Write(ref _purgeError, null);
            return new PurgeRound(watermark, purged, batches, compacted);
        }
    }

    /// <summary>Counts, cursor, watermark and the writer lock's holds, read now.</summary>
    public TombstoneStatus Status()
    {
        var watermark = Volatile.Read(ref _lastWatermark);
        return new TombstoneStatus(
            Volatile.Read(ref _tombstonesHeld),
            Volatile.Read(ref _tombstonesPurged),
            Volatile.Read(ref _purgedThroughEtag),
            watermark < 0 ? null : watermark,
            _purgeLockHold.Snapshot(LatencyHistogram.MaxWindow),
            Stopwatch.GetElapsedTime(0, Volatile.Read(ref _longestPurgeLockTicks)),
            Volatile.Read(ref _purgeError));
    }

    // One batch: returns the number of tombstones purged. Advances the cursor (persisted with the batch).
    private long PurgeBatch(long upTo)
    {
        var from = Volatile.Read(ref _purgedThroughEtag);
        var (candidates, scannedThrough) = ScanForTombstones(from, upTo);
        // Read the candidates' meta rows once without the lock: drops those written since the scan
        // and brings the rest into the block cache, so the check under the lock is short.
        candidates = StillTombstones(candidates, keep: null);
        BeforeLock?.Invoke();
        _store.Gate.Enter(_store);
        try
        {
            lock (_store.WriteLock)
            {
                var started = Stopwatch.GetTimestamp();
                if (candidates.Count == 0 && Volatile.Read(ref _tombstonesHeld) == 0)
                {
                    // Nothing to purge anywhere: the cursor may move in memory alone (a later write of
                    // the state persists it; a restart before that only scans this stretch again).
                    Volatile.Write(ref _purgedThroughEtag, scannedThrough);
                    return 0;
                }

                using var batch = new WriteBatch();
                var purged = StillTombstones(candidates, batch).Count;
                var counts = new TombstoneCounts(Volatile.Read(ref _tombstonesHeld) - purged, Volatile.Read(ref _tombstonesPurged) + purged, scannedThrough);
                batch.Put(StoredFormats.TombstoneStateKey, StoredFormats.TombstoneState(counts), _store.ChangesHandle);
                try
                {
                    _store.Db.Write(batch, _purgeWriteOptions);
                }
                catch (RocksDbException e)
                {
                    throw _store.WriteFailed($"purging {purged} tombstone(s) after etag {from}", "nothing of this batch was written, the next round tries again", e);
                }

                Publish(counts);
                var held = Stopwatch.GetTimestamp() - started;
                _purgeLockHold.RecordTicks(held);
                if (held > Volatile.Read(ref _longestPurgeLockTicks))
                {
                    Volatile.Write(ref _longestPurgeLockTicks, held);
                }

                return purged;
            }
        }
        finally
        {
            _store.Gate.Exit();
        }
    }

    // Without a lock: the deletions among the change entries after `from`, up to `upTo`, at most a
    // batch's worth; and the etag the scan covered (every entry up to it was looked at).
    private (List<(long Etag, byte[] Id)> Candidates, long ScannedThrough) ScanForTombstones(long from, long upTo)
    {
        var candidates = new List<(long Etag, byte[] Id)>();
        var scannedThrough = upTo;
        _store.Gate.Enter(_store);
        try
        {
            using var iterator = _store.Db.NewIterator(_store.ChangesHandle, _store.ScanRead);
            var examined = 0;
            for (iterator.Seek(StoredFormats.EtagKey(from + 1)); iterator.Valid(); iterator.Next())
            {
                var etag = StoredFormats.ReadEtagKey(iterator.GetKeySpan());
                if (etag > upTo)
                {
                    break;
                }

                var value = iterator.GetValueSpan();
                if (StoredFormats.IsDeletedChange(value))
                {
                    candidates.Add((etag, StoredFormats.ChangeIdKey(value)));
                }

                if (candidates.Count == BatchTombstones || ++examined == BatchScanEntries)
                {
                    scannedThrough = etag;
                    break;
                }
            }

            // Otherwise a failed read would count as scanned through upTo, and its tombstones never be purged.
            _store.ThrowIfIteratorFailed(iterator, "the tombstone scan of the change feed");
        }
        finally
        {
            _store.Gate.Exit();
        }

        return (candidates, scannedThrough);
    }

    // The candidates whose meta row is still that same tombstone (a put or a delete of the id since
    // the scan replaced it, and removed the scanned change entry itself). With a batch (under the
    // writer lock), their meta rows and change entries are deleted in it.
    private List<(long Etag, byte[] Id)> StillTombstones(List<(long Etag, byte[] Id)> candidates, WriteBatch? keep)
    {
        if (candidates.Count == 0)
        {
            return candidates;
        }

        var keys = new byte[candidates.Count][];
        var families = new ColumnFamilyHandle[candidates.Count];
        for (var i = 0; i < keys.Length; i++)
        {
            keys[i] = candidates[i].Id;
            families[i] = _store.MetaHandle;
        }

        KeyValuePair<byte[], byte[]>[] metas;
        _store.Gate.Enter(_store);
        try
        {
            metas = _store.MultiGet(keys, families, keys.Length, DocumentIds.FromKey(keys[0]));
        }
        finally
        {
            _store.Gate.Exit();
        }

        var still = new List<(long Etag, byte[] Id)>(candidates.Count);
        for (var i = 0; i < metas.Length; i++)
        {
            if (metas[i].Value is not { } value || StoredFormats.ReadMeta(value) is not { Deleted: true } meta || meta.Etag != candidates[i].Etag)
            {
                continue;
            }

            still.Add(candidates[i]);
            if (keep is not null)
            {
                keep.Delete(StoredFormats.EtagKey(candidates[i].Etag), _store.ChangesHandle);
                keep.Delete(keys[i], _store.MetaHandle);
                NotePurgedKey(keys[i]);
            }
        }

        return still;
    }

    private void NotePurgedKey(byte[] key)
    {
        if (_purgedLow is null || key.AsSpan().SequenceCompareTo(_purgedLow) < 0)
        {
            _purgedLow = key;
        }

        if (_purgedHigh is null || key.AsSpan().SequenceCompareTo(_purgedHigh) > 0)
        {
            _purgedHigh = key;
        }

        _purgedSinceCompaction++;
    }

    // Compacts meta over the key range purged since the last compaction, once enough was purged
    // there for the rewrite to pay: RocksDB then drops the delete markers that scans step over.
    private bool CompactPurgedRangeIfDue()
    {
        if (_purgedLow is null || _purgedHigh is null)
        {
            return false;
        }

        var documents = PropertyLongGated("rocksdb.estimate-num-keys", _store.MetaHandle);
        if (_purgedSinceCompaction < Math.Max(CompactionFloor, documents / 8))
        {
            return false;
        }

        _store.Gate.Enter(_store);
        try
        {
            Native.Instance.rocksdb_compact_range_cf_opt(
                _store.Db.Handle, _store.MetaHandle.Handle, _compactOptions, _purgedLow, (UIntPtr)_purgedLow.Length, _purgedHigh, (UIntPtr)_purgedHigh.Length);
        }
        finally
        {
            _store.Gate.Exit();
        }

        _purgedLow = _purgedHigh = null;
        _purgedSinceCompaction = 0;
        return true;
    }

    private long PropertyLongGated(string name, ColumnFamilyHandle family)
    {
        _store.Gate.Enter(_store);
        try
        {
            return _store.PropertyLong(name, family);
        }
        finally
        {
            _store.Gate.Exit();
        }
    }

    /// <summary>A round failed on the background thread: the status shows why until a round succeeds.</summary>
    public void RecordError(string error) => Volatile.Write(ref _purgeError, error);

    /// <summary>Under the store's write lock, after the write that changed it: the tombstones held now.</summary>
    public void SetHeld(long held) => Volatile.Write(ref _tombstonesHeld, held);

    // Under the store's write lock, after the batch holding `counts` was written.
    private void Publish(TombstoneCounts counts)
    {
        Volatile.Write(ref _tombstonesHeld, counts.Held);
        Volatile.Write(ref _tombstonesPurged, counts.Purged);
        Volatile.Write(ref _purgedThroughEtag, counts.PurgedThroughEtag);
    }

    /// <summary>Under the store's write lock: the state with <paramref name="held"/> tombstones, to go in the batch of the write that changes it.</summary>
    public void AddState(WriteBatch batch, long held) =>
        batch.Put(
            StoredFormats.TombstoneStateKey,
            StoredFormats.TombstoneState(new TombstoneCounts(held, Volatile.Read(ref _tombstonesPurged), Volatile.Read(ref _purgedThroughEtag))),
            _store.ChangesHandle);

    // On open: the persisted state; a store written before tombstones were counted has none, so its
    // tombstones are counted once by a scan of meta and the state is written.
    private TombstoneCounts RecoverTombstoneState()
    {
        if (_store.Db.Get(StoredFormats.TombstoneStateKey.ToArray(), _store.ChangesHandle, _store.PointRead) is { } value)
        {
            return StoredFormats.ReadTombstoneState(value);
        }

        var counts = new TombstoneCounts(CountTombstoneRows(), 0, 0);
        using var batch = new WriteBatch();
        batch.Put(StoredFormats.TombstoneStateKey, StoredFormats.TombstoneState(counts), _store.ChangesHandle);
        _store.Db.Write(batch, _store.DefaultWriteOptions);
        return counts;
    }

    /// <summary>Counts the tombstone rows of meta by a full scan (the open of an older store, and tests checking the counter).</summary>
    public long CountTombstoneRows()
    {
        _store.Gate.Enter(_store);
        try
        {
            long count = 0;
            using var iterator = _store.Db.NewIterator(_store.MetaHandle, _store.ScanRead);
            for (iterator.SeekToFirst(); iterator.Valid(); iterator.Next())
            {
                if (StoredFormats.ReadMeta(iterator.GetValueSpan()).Deleted)
                {
                    count++;
                }
            }

            _store.ThrowIfIteratorFailed(iterator, "counting tombstones");
            return count;
        }
        finally
        {
            _store.Gate.Exit();
        }
    }

    /// <summary>Frees the compaction options; after the purge thread stopped and before the database closes. Idempotent.</summary>
    public void Dispose()
    {
        var options = Interlocked.Exchange(ref _compactOptions, IntPtr.Zero);
        if (options != IntPtr.Zero)
        {
            Native.Instance.rocksdb_compactoptions_destroy(options);
        }
    }

    private static IntPtr CreateCompactOptions()
    {
        var options = Native.Instance.rocksdb_compactoptions_create();
        // Not exclusive: RocksDB's automatic compactions (which keep writes from stalling) go on
        // while the purged range is compacted.
        Native.Instance.rocksdb_compactoptions_set_exclusive_manual_compaction(options, 0);
        // Rewrite the bottommost files in the range too (kForceOptimized): a freshly flushed file of
        // delete markers that overlaps nothing below is otherwise just moved down whole, markers
        // and all, and the default leaves files already at the bottom alone.
        Native.Instance.rocksdb_compactoptions_set_bottommost_level_compaction(options, BottommostForceOptimized);
        return options;
    }
}
