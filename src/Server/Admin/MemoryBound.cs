using Indexing.Engine;
using Indexing.Indexer;
using Indexing.Storage;

namespace Indexing.Server.Admin;

/// <summary>
/// The most the server process should hold while one index is rebuilt side by side under live traffic:
/// what its settings bound, plus a fixed overhead measured once. docs/architecture.md ("Memory bound") and the
/// scale run's report (peak RSS against <see cref="TotalBytes"/>) use it. Per process: the prefetch budget
/// (one for every prefetch of the engine, however many rebuilds run), the caches, the memtables and the
/// overhead. Per running rebuild: its writers' RAM buffers (<see cref="LuceneRamBufferBytes"/>), which each
/// further rebuild running at once adds again, up to <c>Indexes:MaxConcurrentRebuilds</c>.
/// </summary>
/// <param name="PrefetchBudgetBytes">
/// The engine's one prefetch budget (<c>Indexes:PrefetchBudgetBytes</c>): document bytes in flight plus
/// buffered of every prefetch together never exceed it, but for one document larger than all of it, read alone.
/// </param>
/// <param name="BlockCacheBytes">Storage:BlockCacheBytes (index and filter blocks included: they live in it).</param>
/// <param name="RowCacheBytes">Storage:RowCacheBytes (0: none).</param>
/// <param name="MemtableBytes">Every column family's write buffer times the buffers it may have.</param>
/// <param name="LuceneRamBufferBytes">
/// One rebuild's two writers, the serving generation (its following buffer) and its replacement (its
/// build buffer during the bulk phase), each twice its buffer: Lucene flushes at the buffer size but
/// lets indexing threads go on until twice that before it stalls them.
/// </param>
/// <param name="FixedOverheadBytes">Everything else, measured: see <see cref="MeasuredOverheadBytes"/>.</param>
internal sealed record MemoryBound(
    long PrefetchBudgetBytes,
    long BlockCacheBytes,
    long RowCacheBytes,
    long MemtableBytes,
    long LuceneRamBufferBytes,
    long FixedOverheadBytes)
{
    /// <summary>
    /// The fixed overhead: the .NET runtime and JIT-compiled code, Kestrel, RocksDB's and Lucene's code
    /// and static state, thread stacks, the GC's own headroom (garbage not yet collected: documents the
    /// indexer is done with, Lucene's per-document garbage, which can be a few times the prefetch
    /// budget), Lucene's merges, and what malloc keeps but does not use. Measured by `soak` as
    /// "unaccounted": private memory (RSS without mapped files) minus the parts above as they stand,
    /// each second. The rule: the most the server's default (glibc, arenas limited to one per core at
    /// start) left unaccounted on the 10 GiB run, with some headroom, since the bound must hold for
    /// the default allocator and a smaller one would be crossed (benchmarks/results/README.md,
    /// "Scale and memory"; other allocators leave less, docs/decisions/0010). 1.25 GiB here.
    /// </summary>
    public const long MeasuredOverheadBytes = 5L << 28;

    /// <summary>The bound: the sum of the parts.</summary>
    public long TotalBytes => PrefetchBudgetBytes + BlockCacheBytes + RowCacheBytes + MemtableBytes + LuceneRamBufferBytes + FixedOverheadBytes;

    /// <summary>
    /// The bound for a server with these store settings, the memtable limit and the one prefetch budget
    /// the engine reports, and the default index options (or <paramref name="indexes"/>), for one rebuild.
    /// </summary>
    public static MemoryBound For(StoreOptions store, EngineMemory memory, IndexOptions? indexes = null)
    {
        indexes ??= new IndexOptions();
        return new MemoryBound(
            memory.RebuildPrefetchBudgetBytes,
            store.BlockCacheBytes,
            store.RowCacheBytes,
            memory.MemtableLimitBytes,
            2 * (long)((indexes.RamBufferSizeMB + indexes.BuildRamBufferSizeMB) * 1024 * 1024),
            MeasuredOverheadBytes);
    }
}
