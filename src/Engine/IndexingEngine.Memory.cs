using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Engine;

/// <summary>Memory: where the engine's memory is now, for a host's memory bound, charts and gauges.</summary>
public sealed partial class IndexingEngine
{
    /// <summary>
    /// One reading of the memory the engine holds: RocksDB's caches, memtables and table readers with
    /// their hit counts, the index writers' RAM buffers, the document bytes running prefetches hold,
    /// and what bounds them. Cheap enough to read every second.
    /// </summary>
    public EngineMemory GetMemory()
    {
        ThrowIfDisposed();
        var store = _store.GetMemory();

        return new EngineMemory
        {
            BlockCacheUsageBytes = store.BlockCacheUsageBytes,
            BlockCachePinnedBytes = store.BlockCachePinnedBytes,
            BlockCacheCapacityBytes = store.BlockCacheCapacityBytes,
            RowCacheUsageBytes = store.RowCacheUsageBytes,
            RowCacheCapacityBytes = store.RowCacheCapacityBytes,
            MemtableBytes = store.MemtableBytes,
            MemtableLimitBytes = store.MemtableLimitBytes,
            TableReadersBytes = store.TableReadersBytes,
            ForegroundBlockCacheHits = store.ForegroundBlockCache.Hits,
            ForegroundBlockCacheMisses = store.ForegroundBlockCache.Misses,
            AllReadsBlockCacheHits = store.AllReadsBlockCache.Hits,
            AllReadsBlockCacheMisses = store.AllReadsBlockCache.Misses,
            RowCacheHits = store.RowCache.Hits,
            RowCacheMisses = store.RowCache.Misses,
            FileBytesRead = store.FileBytesRead,
            LuceneRamBufferBytes = _indexes.RamBufferBytes,
            PrefetchHeldBytes = PrefetchOptions.SharedBudget!.HeldBytes,
            RebuildPrefetchBudgetBytes = PrefetchOptions.SharedBudget.BudgetBytes,
            Malloc = RocksDbNative.DescribeMalloc(),
            RocksDbLibraryPath = RocksDbNative.LoadedLibraryPath,
        };
    }

    /// <summary>
    /// Limits glibc's malloc arenas to <paramref name="maxArenas"/> for the rest of the process
    /// (<c>mallopt(M_ARENA_MAX)</c>, what <c>MALLOC_ARENA_MAX</c> sets), unless the environment sets
    /// <c>MALLOC_ARENA_MAX</c> (an operator's choice wins) or jemalloc is the process's malloc. A host calls
    /// it first thing, before its threads exist: memory one arena frees is not reused by another, so
    /// fewer arenas (one per core, say) hold less private memory at the same speed. Returns whether the
    /// limit was set; the first call decides.
    /// </summary>
    public static bool LimitGlibcArenas(int maxArenas) => RocksDbNative.LimitGlibcArenas(maxArenas);

    /// <summary>
    /// Why <see cref="Indexer.IndexOptions.IndexingThreadNice"/> cannot lower the indexing threads' priority in this
    /// process (the platform has no per-thread nice), or null when it can: a host's start-up warning.
    /// </summary>
    public static string? IndexingThreadNiceUnsupportedReason =>
        Indexer.ThreadNice.CurrentThreadNice() is null ? Indexer.ThreadNice.UnsupportedReason : null;
}

/// <summary>
/// Where an <see cref="IndexingEngine"/>'s memory is at one moment (<see cref="IndexingEngine.GetMemory"/>):
/// RocksDB's own figures, the index writers' RAM buffers and the bytes running prefetches hold. Hit and
/// miss counts and <see cref="FileBytesRead"/> count since the store opened.
/// </summary>
public sealed record EngineMemory
{
    /// <summary>Bytes in RocksDB's block cache (data, index and filter blocks).</summary>
    public long BlockCacheUsageBytes { get; init; }

    /// <summary>Block cache bytes pinned by readers (in use, not evictable); part of <see cref="BlockCacheUsageBytes"/>.</summary>
    public long BlockCachePinnedBytes { get; init; }

    /// <summary>The block cache's size (<see cref="StoreOptions.BlockCacheBytes"/>).</summary>
    public long BlockCacheCapacityBytes { get; init; }

    /// <summary>Bytes in RocksDB's row cache.</summary>
    public long RowCacheUsageBytes { get; init; }

    /// <summary>The row cache's size (<see cref="StoreOptions.RowCacheBytes"/>; 0: none).</summary>
    public long RowCacheCapacityBytes { get; init; }

    /// <summary>Bytes in memtables over all column families.</summary>
    public long MemtableBytes { get; init; }

    /// <summary>The most memtables can hold: each column family's write buffer size times the buffers it may have.</summary>
    public long MemtableLimitBytes { get; init; }

    /// <summary>Memory of open SST readers outside the block cache.</summary>
    public long TableReadersBytes { get; init; }

    /// <summary>Block cache hits of foreground Gets alone.</summary>
    public long ForegroundBlockCacheHits { get; init; }

    /// <summary>Block cache misses of foreground Gets alone.</summary>
    public long ForegroundBlockCacheMisses { get; init; }

    /// <summary>Block cache hits of every read, rebuild scans included.</summary>
    public long AllReadsBlockCacheHits { get; init; }

    /// <summary>Block cache misses of every read, rebuild scans included.</summary>
    public long AllReadsBlockCacheMisses { get; init; }

    /// <summary>Row cache hits (point reads only).</summary>
    public long RowCacheHits { get; init; }

    /// <summary>Row cache misses (point reads only).</summary>
    public long RowCacheMisses { get; init; }

    /// <summary>Bytes RocksDB read from its SST and blob files, readahead included: what reads cost the device.</summary>
    public long FileBytesRead { get; init; }

    /// <summary>Bytes buffered by every index writer (serving and rebuilding).</summary>
    public long LuceneRamBufferBytes { get; init; }

    /// <summary>Document bytes every running prefetch of the engine holds (in flight + buffered), drawn from the one budget.</summary>
    public long PrefetchHeldBytes { get; init; }

    /// <summary>
    /// The one byte budget every prefetch of the engine draws from, every rebuild's together
    /// (<see cref="Indexer.IndexOptions.PrefetchBudgetBytes"/>; in flight plus buffered never exceed it,
    /// but for one document larger than all of it, read alone).
    /// </summary>
    public long RebuildPrefetchBudgetBytes { get; init; }

    /// <summary>Which malloc the process (and RocksDB) allocates with, as an operator reads it.</summary>
    public string Malloc { get; init; } = "";

    /// <summary>The RocksDB native library loaded, or null before the first store opened it.</summary>
    public string? RocksDbLibraryPath { get; init; }
}
