using System.Globalization;
using RocksDbSharp;

namespace Indexing.Storage;

// What RocksDB holds in memory (caches, memtables, table readers) and how the caches serve reads:
// cheap enough to read every second (no rocksdb.stats text). Foreground Gets count their own block
// cache hits and misses through RocksDB's per-thread perf context, so a rebuild's reads (fill_cache
// off, but still looked up) and query result loads do not blur the figure.
public sealed partial class DocumentStore
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
}
