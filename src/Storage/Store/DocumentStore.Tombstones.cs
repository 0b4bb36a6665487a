using System.Diagnostics;
using RocksDbSharp;

namespace Indexing.Storage;

// Tombstone cleanup. A delete leaves a tombstone: its meta row (deleted flag) and its change entry,
// so that readers of the change feed see the delete. Once every reader has durably applied it, it
// is garbage. The store does not know its readers (Storage knows nothing of indexes): whoever owns
// them registers a low watermark L (RegisterTombstoneWatermark): nothing will ever again read the
// change feed at or below L. With no registration nothing is purged; with several, the lowest rules.
//
// A purge round (one at a time: _purgeLock; the background thread and the registrations are in
// .Purger.cs) reads L, caps it at the last etag, and walks the change feed from a persisted cursor
// ("purged through" P: every tombstone at or below P is gone) up to it, in batches. A batch finds up to PurgeBatchTombstones deletions among at most
// PurgeBatchScanEntries change entries without any lock, then takes the writer lock once: it
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
// compaction; and once a round has purged many (PurgeCompactionFloor, or an eighth of the
// documents), the purged key range of meta is compacted (not exclusively: RocksDB's automatic
// compactions go on meanwhile), which flushes the memtable and drops the markers.
internal sealed partial class DocumentStore
{
    /// <summary>Most tombstones one purge batch removes, i.e. per hold of the writer lock.</summary>
    internal const int PurgeBatchTombstones = 256;

    /// <summary>Most change entries one purge batch looks at, so that a batch over a stretch of live entries ends too.</summary>
    internal const int PurgeBatchScanEntries = 8192;

    /// <summary>Fewest tombstones purged since the last compaction of their key range before the next one.</summary>
    internal const long PurgeCompactionFloor = 10_000;

    // RocksDB's BottommostLevelCompaction::kForceOptimized.
    private const byte BottommostForceOptimized = 3;

    private readonly Lock _purgeLock = new();
    private readonly WriteOptions _purgeWriteOptions = new WriteOptions().SetSync(false);
    private readonly IntPtr _compactOptions = CreateCompactOptions();

    // Under _writeLock for writes; read without it (Volatile) for status.
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

    /// <summary>Test hook: called after each purge batch is written, with its number in the round (1, 2, ...); it may throw or block.</summary>
    internal Action<int>? PurgeBatchWritten { get; set; }

    /// <summary>Test hook: called between a purge batch's scan and its taking the writer lock (a concurrent write goes here).</summary>
    internal Action? PurgeBeforeLock { get; set; }

    /// <summary>
    /// Runs one purge round now, on the caller's thread (the background purger runs the same): every
    /// tombstone at or below the registered low watermark goes, in batches. Returns what it did.
    /// </summary>
    internal PurgeRound PurgeTombstones(CancellationToken cancellationToken = default)
    {
        lock (_purgeLock)
        {
            if (ReadWatermark() is not { } watermark)
            {
                Volatile.Write(ref _lastWatermark, -1);
                return new PurgeRound(null, 0, 0, Compacted: false);
            }

            Volatile.Write(ref _lastWatermark, watermark);
            var upTo = Math.Min(watermark, LastEtag);
            long purged = 0;
            var batches = 0;
            while (Volatile.Read(ref _purgedThroughEtag) < upTo)
            {
                cancellationToken.ThrowIfCancellationRequested();
                purged += PurgeBatch(upTo);
                batches++;
                PurgeBatchWritten?.Invoke(batches);
            }

            var compacted = CompactPurgedRangeIfDue();
            Volatile.Write(ref _purgeError, null);
            return new PurgeRound(watermark, purged, batches, compacted);
        }
    }

    private TombstoneStatus TombstoneStatusNow()
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
        PurgeBeforeLock?.Invoke();
        _gate.Enter(this);
        try
        {
            lock (_writeLock)
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
                batch.Put(StoredFormats.TombstoneStateKey, StoredFormats.TombstoneState(counts), _changes);
                try
                {
                    _db.Write(batch, _purgeWriteOptions);
                }
                catch (RocksDbException e)
                {
                    throw WriteFailed($"purging {purged} tombstone(s) after etag {from}", "nothing of this batch was written, the next round tries again", e);
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
            _gate.Exit();
        }
    }

    // Without a lock: the deletions among the change entries after `from`, up to `upTo`, at most a
    // batch's worth; and the etag the scan covered (every entry up to it was looked at).
    private (List<(long Etag, byte[] Id)> Candidates, long ScannedThrough) ScanForTombstones(long from, long upTo)
    {
        var candidates = new List<(long Etag, byte[] Id)>();
        var scannedThrough = upTo;
        _gate.Enter(this);
        try
        {
            using var iterator = _db.NewIterator(_changes, _scanRead);
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

                if (candidates.Count == PurgeBatchTombstones || ++examined == PurgeBatchScanEntries)
                {
                    scannedThrough = etag;
                    break;
                }
            }

            // Otherwise a failed read would count as scanned through upTo, and its tombstones never be purged.
            ThrowIfIteratorFailed(iterator, "the tombstone scan of the change feed");
        }
        finally
        {
            _gate.Exit();
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
            families[i] = _meta;
        }

        KeyValuePair<byte[], byte[]>[] metas;
        _gate.Enter(this);
        try
        {
            metas = MultiGet(keys, families, keys.Length, DocumentIds.FromKey(keys[0]));
        }
        finally
        {
            _gate.Exit();
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
                keep.Delete(StoredFormats.EtagKey(candidates[i].Etag), _changes);
                keep.Delete(keys[i], _meta);
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

        var documents = PropertyLongGated("rocksdb.estimate-num-keys", _meta);
        if (_purgedSinceCompaction < Math.Max(PurgeCompactionFloor, documents / 8))
        {
            return false;
        }

        _gate.Enter(this);
        try
        {
            Native.Instance.rocksdb_compact_range_cf_opt(
                _db.Handle, _meta.Handle, _compactOptions, _purgedLow, (UIntPtr)_purgedLow.Length, _purgedHigh, (UIntPtr)_purgedHigh.Length);
        }
        finally
        {
            _gate.Exit();
        }

        _purgedLow = _purgedHigh = null;
        _purgedSinceCompaction = 0;
        return true;
    }

    private long PropertyLongGated(string name, ColumnFamilyHandle family)
    {
        _gate.Enter(this);
        try
        {
            return PropertyLong(name, family);
        }
        finally
        {
            _gate.Exit();
        }
    }

    // Under _writeLock, after the batch holding `counts` was written.
    private void Publish(TombstoneCounts counts)
    {
        Volatile.Write(ref _tombstonesHeld, counts.Held);
        Volatile.Write(ref _tombstonesPurged, counts.Purged);
        Volatile.Write(ref _purgedThroughEtag, counts.PurgedThroughEtag);
    }

    // Under _writeLock: the state with `held` tombstones, to go in the batch of the write that changes it.
    private void AddTombstoneState(WriteBatch batch, long held) =>
        batch.Put(
            StoredFormats.TombstoneStateKey,
            StoredFormats.TombstoneState(new TombstoneCounts(held, Volatile.Read(ref _tombstonesPurged), Volatile.Read(ref _purgedThroughEtag))),
            _changes);

    // On open: the persisted state; a store written before tombstones were counted has none, so its
    // tombstones are counted once by a scan of meta and the state is written.
    private TombstoneCounts RecoverTombstoneState()
    {
        if (_db.Get(StoredFormats.TombstoneStateKey.ToArray(), _changes, _pointRead) is { } value)
        {
            return StoredFormats.ReadTombstoneState(value);
        }

        var counts = new TombstoneCounts(CountTombstoneRows(), 0, 0);
        using var batch = new WriteBatch();
        batch.Put(StoredFormats.TombstoneStateKey, StoredFormats.TombstoneState(counts), _changes);
        _db.Write(batch, _writeOptions);
        return counts;
    }

    /// <summary>Counts the tombstone rows of meta by a full scan (the open of an older store, and tests checking the counter).</summary>
    internal long CountTombstoneRows()
    {
        _gate.Enter(this);
        try
        {
            long count = 0;
            using var iterator = _db.NewIterator(_meta, _scanRead);
            for (iterator.SeekToFirst(); iterator.Valid(); iterator.Next())
            {
                if (StoredFormats.ReadMeta(iterator.GetValueSpan()).Deleted)
                {
                    count++;
                }
            }

            ThrowIfIteratorFailed(iterator, "counting tombstones");
            return count;
        }
        finally
        {
            _gate.Exit();
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
