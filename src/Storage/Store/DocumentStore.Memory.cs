using System.Globalization;
using RocksDbSharp;

namespace Indexing.Storage;

// What RocksDB holds in memory (caches, memtables, table readers) and how the caches serve reads:
// cheap enough to read every second (no rocksdb.stats text). Foreground Gets count their own block
// cache hits and misses through RocksDB's per-thread perf context, so a rebuild's reads (fill_cache
// off, but still looked up) and query result loads do not blur the figure.
internal sealed partial class DocumentStore
{
    private readonly PointReadCacheCounter _foregroundCache = new();

    /// <summary>RocksDB's memory and cache figures now. Cheap (property reads and one statistics text); call it every second if need be.</summary>
    public StoreMemory GetMemory()
    {
        _gate.Enter(this);
        try
        {
            var statistics = _db.GetProperty("rocksdb.options-statistics") ?? string.Empty;
            return new StoreMemory(
                BlockCacheUsageBytes: _tuning.BlockCache is { } cache ? (long)cache.GetUsage() : 0,
                BlockCachePinnedBytes: _tuning.BlockCache is { } pinned ? (long)pinned.GetPinnedUsage() : 0,
                BlockCacheCapacityBytes: Options.BlockCacheBytes,
                RowCacheUsageBytes: _tuning.RowCache is { } rows ? (long)rows.GetUsage() : 0,
                RowCacheCapacityBytes: Options.RowCacheBytes,
                MemtableBytes: SumOverFamilies("rocksdb.cur-size-all-mem-tables"),
                MemtableLimitBytes: _tuning.MemtableLimitBytes,
                TableReadersBytes: SumOverFamilies("rocksdb.estimate-table-readers-mem"),
                ForegroundBlockCache: _foregroundCache.Read(),
                AllReadsBlockCache: new CacheCounts(Ticker(statistics, "rocksdb.block.cache.hit"), Ticker(statistics, "rocksdb.block.cache.miss")),
                RowCache: new CacheCounts(Ticker(statistics, "rocksdb.row.cache.hit"), Ticker(statistics, "rocksdb.row.cache.miss")),
                FileBytesRead: Ticker(statistics, "rocksdb.non.last.level.read.bytes") + Ticker(statistics, "rocksdb.last.level.read.bytes"));
        }
        finally
        {
            _gate.Exit();
        }
    }

    private long SumOverFamilies(string property) =>
        PropertyLong(property, _docs) + PropertyLong(property, _meta) + PropertyLong(property, _changes);

    // One ticker line of RocksDB's statistics text: "rocksdb.row.cache.hit COUNT : 123".
    private static long Ticker(string statistics, string name)
    {
        var at = statistics.IndexOf(name + " COUNT : ", StringComparison.Ordinal);
        if (at < 0)
        {
            return 0;
        }

        var start = at + name.Length + " COUNT : ".Length;
        var end = statistics.IndexOf('\n', start);
        var digits = statistics.AsSpan(start, (end < 0 ? statistics.Length : end) - start).Trim();
        return long.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out var value) ? value : 0;
    }

    // Block cache hits and misses of the reads between Begin and End on the calling thread, summed
    // over every thread. RocksDB's perf context is thread-local: its level is switched on for the
    // read only, and the context is reset first, so other reads on the same thread never count.
    private sealed class PointReadCacheCounter
    {
        // The C API's handle on this thread's perf context: a small wrapper made once per thread that
        // reads, and only ever used on that thread (so never after the thread and its context are gone).
        [ThreadStatic]
        private static IntPtr t_context;

        private long _hits;
        private long _misses;

        public static void Begin()
        {
            var native = Native.Instance;
            native.rocksdb_set_perf_level(PerfLevel.EnableCount);
            if (t_context == IntPtr.Zero)
            {
                t_context = native.rocksdb_perfcontext_create();
            }

            native.rocksdb_perfcontext_reset(t_context);
        }

        public void End()
        {
            var native = Native.Instance;
            Interlocked.Add(ref _hits, (long)native.rocksdb_perfcontext_metric(t_context, PerfMetric.BlockCacheHitCount));
            // A block read from the file is a block the cache did not have.
            Interlocked.Add(ref _misses, (long)native.rocksdb_perfcontext_metric(t_context, PerfMetric.BlockReadCount));
            native.rocksdb_set_perf_level(PerfLevel.Disable);
        }

        public CacheCounts Read() => new(Interlocked.Read(ref _hits), Interlocked.Read(ref _misses));
    }
}

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
