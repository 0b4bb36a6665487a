using System.Globalization;
using RocksDbSharp;

namespace Indexing.Storage;

// What RocksDB holds in memory (caches, memtables, table readers) and how the caches serve reads:
// cheap enough to read every second (no rocksdb.stats text). Foreground Gets count their own block
// cache hits and misses through RocksDB's per-thread perf context, so a rebuild's reads (fill_cache
// off, but still looked up) and query result loads do not blur the figure.

/// <summary>
/// A <see cref="DocumentStore"/>'s figures as RocksDB reports them: properties summed over the
/// column families, the statistics tickers, the caches' usage, whether background work is pending,
/// and the block cache hits and misses of foreground reads, which it counts itself.
/// </summary>
/// <remarks>
/// Threading: any thread; every call that reads RocksDB is made inside the store's gate (the
/// caller's). The foreground counter is Interlocked (<see cref="PointReadCacheCounter"/>).
/// </remarks>
internal sealed class StoreStatistics(DocumentStore store, StoreTuning tuning)
{
    /// <summary>Block cache hits and misses of foreground Gets.</summary>
    public PointReadCacheCounter ForegroundCache { get; } = new();

    /// <summary>RocksDB's memory and cache figures now; the caller is inside the store's gate.</summary>
    public StoreMemory Memory()
    {
        var statistics = store.Db.GetProperty("rocksdb.options-statistics") ?? string.Empty;
        return new StoreMemory(
            BlockCacheUsageBytes: tuning.BlockCache is { } cache ? (long)cache.GetUsage() : 0,
            BlockCachePinnedBytes: tuning.BlockCache is { } pinned ? (long)pinned.GetPinnedUsage() : 0,
            BlockCacheCapacityBytes: store.Options.BlockCacheBytes,
            RowCacheUsageBytes: tuning.RowCache is { } rows ? (long)rows.GetUsage() : 0,
            RowCacheCapacityBytes: store.Options.RowCacheBytes,
            MemtableBytes: SumOverFamilies("rocksdb.cur-size-all-mem-tables"),
            MemtableLimitBytes: tuning.MemtableLimitBytes,
            TableReadersBytes: SumOverFamilies("rocksdb.estimate-table-readers-mem"),
            ForegroundBlockCache: ForegroundCache.Read(),
            AllReadsBlockCache: new CacheCounts(Ticker(statistics, "rocksdb.block.cache.hit"), Ticker(statistics, "rocksdb.block.cache.miss")),
            RowCache: new CacheCounts(Ticker(statistics, "rocksdb.row.cache.hit"), Ticker(statistics, "rocksdb.row.cache.miss")),
            FileBytesRead: Ticker(statistics, "rocksdb.non.last.level.read.bytes") + Ticker(statistics, "rocksdb.last.level.read.bytes"));
    }

    /// <summary>Bytes the block cache holds now (0 without one).</summary>
    public long BlockCacheUsageBytes => tuning.BlockCache is { } cache ? (long)cache.GetUsage() : 0;

    /// <summary>Whether a flush or compaction is running, or pending in any column family; the caller is inside the store's gate.</summary>
    public bool BackgroundWorkPending() =>
        (long.TryParse(store.Db.GetProperty("rocksdb.num-running-compactions"), out var compactions) && compactions > 0)
        || (long.TryParse(store.Db.GetProperty("rocksdb.num-running-flushes"), out var flushes) && flushes > 0)
        || SumOverFamilies("rocksdb.compaction-pending") > 0
        || SumOverFamilies("rocksdb.mem-table-flush-pending") > 0;

    /// <summary>An integer property of one column family (0 when RocksDB has none).</summary>
    public long PropertyLong(string name, ColumnFamilyHandle family) =>
        long.TryParse(store.Db.GetProperty(name, family), out var value) ? value : 0;

    /// <summary>An integer property summed over the three column families.</summary>
    public long SumOverFamilies(string property) =>
        PropertyLong(property, store.DocsHandle) + PropertyLong(property, store.MetaHandle) + PropertyLong(property, store.ChangesHandle);

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
}
