using RocksDbSharp;

namespace Indexing.Storage;

/// <summary>
/// The document store: JSON documents in RocksDB with store-wide etags, a change feed,
/// snapshots, and a metadata scan that knows every document's size without reading its body.
/// </summary>
/// <remarks>
/// <para>
/// Owns one RocksDB instance with three column families: <c>docs</c> (id -> body), <c>meta</c>
/// (id -> etag, size, deleted flag) and <c>changes</c> (etag -> id, size, deleted flag; one live
/// entry per document). Every write puts all three in one WriteBatch, so they never disagree. The
/// tombstone state (counts and purge cursor) sits at etag 0 of <c>changes</c>, written in the same
/// batch as whatever changes it.
/// </para>
/// <para>
/// Threading: reads run concurrently from any thread; writes are serialised by one lock, under
/// which the next etag is assigned and the previous change entry found (the etag is only
/// consumed once the batch is written). <see cref="Dispose"/> may race with reads and scans on
/// other threads: it waits for native calls in flight, then frees open iterators and snapshots
/// before closing the database; afterwards every call throws <see cref="ObjectDisposedException"/>.
/// </para>
/// <para>
/// Files: this one (open, tuning, status, dispose); <c>.Writes.cs</c>; <c>.Full.cs</c> (a full
/// volume as callers see it); <c>.Reads.cs</c>; <c>.Tombstones.cs</c> (the watermarks and purge
/// rounds as callers see them); <c>.Memory.cs</c> (what RocksDB holds in memory, cache hit counts, as
/// <see cref="StoreStatistics"/> reads them).
/// Classes the store holds, each with its own state: <see cref="TombstonePurger"/> (tombstone counts,
/// purge rounds), <see cref="TombstonePurgeThread"/> (watermark registrations, the background
/// thread), <see cref="WriteRefusal"/> (whether writes are accepted), <see cref="OpenHandles"/>
/// (iterators and snapshots to free), <see cref="StoreStatistics"/> (RocksDB's figures). Beside them:
/// <c>RocksDbNative.cs</c> (which native library and malloc); <see cref="StoreSnapshot"/>;
/// <c>StoredFormats.cs</c> (byte layouts); <c>NativeGate.cs</c>.
/// </para>
/// </remarks>
internal sealed partial class DocumentStore : IDisposable
{
    internal const string DocsFamily = "docs";
    internal const string MetaFamily = "meta";
    internal const string ChangesFamily = "changes";

    /// <summary>
    /// Document bodies of this size and more live in blob files apart from the SST files (RocksDB's
    /// integrated BlobDB), so reading the small documents beside a giant does not read the giant.
    /// </summary>
    public const long MinBlobBytes = 256 << 10;

    // Read-once scans: do not fill the block cache with data nobody reads again; read ahead in
    // large sequential chunks (2 MiB: a few blocks is too little on network disks).
    internal const ulong ScanReadaheadBytes = 2 << 20;

    private readonly RocksDb _db;
    private readonly ColumnFamilyHandle _docs;
    private readonly ColumnFamilyHandle _meta;
    private readonly ColumnFamilyHandle _changes;
    private readonly StoreTuning _tuning;
    private readonly NativeGate _gate = new();
    private readonly Lock _writeLock = new();

    // Created once and reused: RocksDbSharp's ReadOptions/WriteOptions have finalizers only, so
    // per-call instances would pile up native allocations until the GC runs.
    private readonly ReadOptions _pointRead = new();
    private readonly ReadOptions _scanRead = new ReadOptions().SetFillCache(false).SetReadaheadSize(ScanReadaheadBytes);
    private readonly WriteOptions _writeOptions;

    private readonly OpenHandles _handles = new();
    private readonly StoreStatistics _statistics;
    private readonly WriteRefusal _refusal;
    private readonly TombstonePurger _tombstones;
    private readonly TombstonePurgeThread _purgeThread;
    private long _lastEtag;

    private DocumentStore(string path, StoreOptions options, RocksDb db, StoreTuning tuning)
    {
        Path = path;
        Options = options;
        _db = db;
        _tuning = tuning;
        _docs = db.GetColumnFamily(DocsFamily);
        _meta = db.GetColumnFamily(MetaFamily);
        _changes = db.GetColumnFamily(ChangesFamily);
        _writeOptions = new WriteOptions().SetSync(options.SyncWrites);
        _refusal = new WriteRefusal(this);
        _statistics = new StoreStatistics(this, tuning);
        _tombstones = new TombstonePurger(this);
        _purgeThread = new TombstonePurgeThread(this, _tombstones);
        try
        {
            // The newest change entry may have been purged: the cursor remembers how far etags went.
            _lastEtag = Math.Max(RecoverLastEtag(), _tombstones.PurgedThroughEtag);
        }
        catch
        {
            // Open disposes the database; this instance is never handed out, so free what only
            // Dispose would (the rest of its native objects have finalizers).
            _tombstones.Dispose();
            throw;
        }
    }

    /// <summary>The directory the store lives in.</summary>
    public string Path { get; }

    /// <summary>The settings the store was opened with.</summary>
    public StoreOptions Options { get; }

    /// <summary>Latencies of foreground reads (<see cref="Get"/>): the prefetcher backs off when they rise.</summary>
    public LatencyHistogram ForegroundReadLatency { get; } = new();

    /// <summary>The etag of the latest write; 0 for an empty store.</summary>
    public long LastEtag => Interlocked.Read(ref _lastEtag);

    internal NativeGate Gate => _gate;

    internal RocksDb Db => _db;

    internal ColumnFamilyHandle DocsHandle => _docs;

    internal ColumnFamilyHandle MetaHandle => _meta;

    internal ColumnFamilyHandle ChangesHandle => _changes;

    /// <summary>Serialises writes; the tombstone purger's batches take it too.</summary>
    internal Lock WriteLock => _writeLock;

    internal ReadOptions PointRead => _pointRead;

    internal ReadOptions ScanRead => _scanRead;

    internal WriteOptions DefaultWriteOptions => _writeOptions;

    /// <summary>Opens (creating if missing) the store in <paramref name="path"/>.</summary>
    /// <exception cref="DocumentStoreException">RocksDB could not open it (locked by another process, corrupt, no permission).</exception>
    /// <exception cref="Microsoft.Extensions.Options.OptionsValidationException"><paramref name="options"/> break a rule of <see cref="StoreOptionsValidator"/>; nothing was created.</exception>
    public static DocumentStore Open(string path, StoreOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(path);
        options = OptionProblems.ThrowIfInvalid(new StoreOptionsValidator(), options ?? StoreOptions.Default);
        var full = System.IO.Path.GetFullPath(path);
        try
        {
            // Before the first RocksDB object (and before anything is created on disk): the native
            // library is chosen once per process.
            RocksDbNative.Ensure(options.Library);
        }
        catch (InvalidOperationException e)
        {
            throw new DocumentStoreException($"could not open the document store at {MessageText.Quote(full)}: {e.Message}", e);
        }

        Directory.CreateDirectory(full);

        var tuning = new StoreTuning(options);
        try
        {
            var db = RocksDb.Open(tuning.Db, full, tuning.Families);
            try
            {
                return new DocumentStore(full, options, db, tuning);
            }
            catch
            {
                // Recovering the store's state failed (a read error): release the files and their lock.
                db.Dispose();
                throw;
            }
        }
        catch (RocksDbException e)
        {
            // RocksDB names its lock file (".../LOCK: Resource temporarily unavailable"); a bare
            // "lock" would also match a corrupt store's "block checksum mismatch".
            var hint = e.Message.Contains(System.IO.Path.DirectorySeparatorChar + "LOCK", StringComparison.Ordinal)
                ? " Another process (or another DocumentStore in this one) has it open: stop it or use another path."
                : IsNoSpace(e.Message)
                    ? " The store's volume is full (opening writes a new log and manifest): free space on it or grow it, then open the store again."
                    : string.Empty;
            throw new DocumentStoreException($"could not open the document store at {MessageText.Quote(full)}: {e.Message}.{hint}", e);
        }
    }

    /// <summary>A consistent, read-only view of the store now, with its etag high-water mark. Dispose it when done.</summary>
    public StoreSnapshot CreateSnapshot()
    {
        _gate.Enter(this);
        try
        {
            // Under the write lock, so that the snapshot holds exactly the writes up to its etag.
            Snapshot native;
            long etag;
            lock (_writeLock)
            {
                native = _db.CreateSnapshot();
                etag = _lastEtag;
            }

            var snapshot = new StoreSnapshot(this, native, etag);
            _handles.Opened(snapshot);
            return snapshot;
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>RocksDB's own figures and the store's open handles, read now.</summary>
    public StoreStatus GetStatus()
    {
        _gate.Enter(this);
        try
        {
            var tombstones = _tombstones.Status();
            var writes = GetWriteStatus();
            return new StoreStatus(
                Path,
                LastEtag,
                EstimatedDocuments: _statistics.PropertyLong("rocksdb.estimate-num-keys", _docs),
                EstimatedLiveDataBytes: _statistics.SumOverFamilies("rocksdb.estimate-live-data-size"),
                LiveSstFilesBytes: _statistics.SumOverFamilies("rocksdb.live-sst-files-size"),
                LiveBlobFilesBytes: _statistics.SumOverFamilies("rocksdb.live-blob-file-size"),
                BlobGarbageBytes: _statistics.SumOverFamilies("rocksdb.live-blob-file-garbage-size"),
                MemtableBytes: _statistics.SumOverFamilies("rocksdb.cur-size-all-mem-tables"),
                BlockCacheUsageBytes: _statistics.BlockCacheUsageBytes,
                BlockCacheCapacityBytes: Options.BlockCacheBytes,
                OpenSnapshots: _handles.Snapshots,
                OpenIterators: _handles.Iterators,
                tombstones.Held,
                tombstones.Purged,
                tombstones.PurgedThroughEtag,
                tombstones.LowWatermark,
                tombstones.LockHold.P99,
                tombstones.LongestLockHold,
                tombstones.Error,
                writes.Accepting,
                writes.VolumeFull,
                writes.RefusedSince,
                writes.Error,
                writes.AvailableBytes,
                writes.ResumeFreeBytes,
                Options: Options.ToString(),
                RocksDbStats: _db.GetProperty("rocksdb.stats") ?? string.Empty);
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>
    /// Waits until RocksDB has no flush or compaction running or pending, checking every 100 ms, for
    /// at most <paramref name="timeout"/>; returns whether it got there. For measurements: a store
    /// just loaded compacts for a while, and its reads would fall on whichever run came first: the
    /// first run after a large load reads clearly more from the files than the runs after it.
    /// </summary>
    public async Task<bool> WaitForCompactionsAsync(TimeSpan timeout, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(timeout, TimeSpan.Zero);
        var deadline = DateTime.UtcNow + timeout;
        while (BackgroundWorkPending())
        {
            if (DateTime.UtcNow >= deadline)
            {
                return false;
            }

            await Task.Delay(TimeSpan.FromMilliseconds(100), cancellationToken).ConfigureAwait(false);
        }

        return true;
    }

    /// <summary>
    /// Closes the store. Stops the tombstone purger, waits for RocksDB calls in flight on other
    /// threads, frees every iterator and snapshot still open, then closes the database. Idempotent.
    /// </summary>
    public void Dispose()
    {
        _purgeThread.Stop();
        if (!_gate.Close())
        {
            return;
        }

        // Nothing can enter now; free in reverse order of creation: iterators, snapshots, database.
        _handles.ReleaseAll();
        _db.Dispose();
        _tombstones.Dispose();
        GC.KeepAlive(_tuning);
    }

    internal OpenIterator OpenIterator(ColumnFamilyHandle family, ReadOptions readOptions, StoreSnapshot? owner)
    {
        var iterator = new OpenIterator(this, _db.NewIterator(family, readOptions), owner);
        _handles.Opened(iterator);
        return iterator;
    }

    internal void IteratorClosed(OpenIterator iterator) => _handles.Closed(iterator);

    internal void SnapshotClosed(StoreSnapshot snapshot) => _handles.Closed(snapshot);

    internal IEnumerable<OpenIterator> IteratorsOf(StoreSnapshot owner) => _handles.IteratorsOf(owner);

    /// <summary>Whether a flush or compaction is running, or pending in any column family.</summary>
    internal bool BackgroundWorkPending()
    {
        _gate.Enter(this);
        try
        {
            return _statistics.BackgroundWorkPending();
        }
        finally
        {
            _gate.Exit();
        }
    }

    internal long PropertyLong(string name, ColumnFamilyHandle family) => _statistics.PropertyLong(name, family);

    private long RecoverLastEtag()
    {
        using var iterator = _db.NewIterator(_changes, _pointRead);
        iterator.SeekToLast();
        if (iterator.Valid())
        {
            return StoredFormats.ReadEtagKey(iterator.GetKeySpan());
        }

        // An empty feed starts at 0; a failed read must not, or new writes would reuse etags.
        ThrowIfIteratorFailed(iterator, "reading the last etag");
        return 0;
    }
}
