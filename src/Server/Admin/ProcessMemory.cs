using System.Globalization;
using Indexing.Engine;

namespace Indexing.Server.Admin;

/// <summary>
/// One reading of where the process's memory is: the OS's view (RSS, threads, open files), the .NET
/// heap, RocksDB's own figures, the indexers' RAM buffers and the bytes prefetches hold. Taken every
/// second by the admin page's <see cref="MemoryMonitor"/> and by <c>soak</c>.
/// </summary>
/// <param name="Elapsed">Since the sampler started.</param>
/// <param name="ResidentBytes">Resident set size (VmRSS): what the OS counts against the process.</param>
/// <param name="PrivateBytes">The resident part the process alone owns (RssAnon + RssShmem): heaps, caches, buffers. The memory bound is about this part.</param>
/// <param name="MappedFileBytes">The resident part that maps files (RssFile): Lucene's index segments (MMapDirectory), the binaries. Clean page cache, which the kernel reclaims under pressure; it grows with the index files being read (merges, verify, queries).</param>
/// <param name="GcHeapBytes">Managed bytes allocated and not yet collected (GC.GetTotalMemory).</param>
/// <param name="GcCommittedBytes">Memory the GC has committed from the OS (GCMemoryInfo.TotalCommittedBytes).</param>
/// <param name="Store">RocksDB's caches, memtables, table readers and cache hit counts.</param>
/// <param name="LuceneRamBufferBytes">Bytes buffered by every index writer (serving and rebuilding).</param>
/// <param name="PrefetchHeldBytes">Document bytes every running prefetch holds (in flight + buffered; bounded by its budget).</param>
/// <param name="Threads">Threads of the process.</param>
/// <param name="OpenFiles">Open file descriptors (sockets and pipes included).</param>
internal sealed record MemorySample(
    TimeSpan Elapsed,
    long ResidentBytes,
    long PrivateBytes,
    long MappedFileBytes,
    long GcHeapBytes,
    long GcCommittedBytes,
    RocksDbMemory Store,
    long LuceneRamBufferBytes,
    long PrefetchHeldBytes,
    int Threads,
    int OpenFiles);

/// <summary>What RocksDB holds in memory now, and how its caches served reads since the store opened (the engine's <see cref="EngineMemory"/>, grouped as the admin page reads it).</summary>
internal sealed record RocksDbMemory(
    long BlockCacheUsageBytes,
    long BlockCachePinnedBytes,
    long BlockCacheCapacityBytes,
    long RowCacheUsageBytes,
    long RowCacheCapacityBytes,
    long MemtableBytes,
    long MemtableLimitBytes,
    long TableReadersBytes,
    CacheHits ForegroundBlockCache,
    CacheHits AllReadsBlockCache,
    CacheHits RowCache,
    long FileBytesRead)
{
    public static RocksDbMemory Of(EngineMemory memory) => new(
        memory.BlockCacheUsageBytes,
        memory.BlockCachePinnedBytes,
        memory.BlockCacheCapacityBytes,
        memory.RowCacheUsageBytes,
        memory.RowCacheCapacityBytes,
        memory.MemtableBytes,
        memory.MemtableLimitBytes,
        memory.TableReadersBytes,
        new CacheHits(memory.ForegroundBlockCacheHits, memory.ForegroundBlockCacheMisses),
        new CacheHits(memory.AllReadsBlockCacheHits, memory.AllReadsBlockCacheMisses),
        new CacheHits(memory.RowCacheHits, memory.RowCacheMisses),
        memory.FileBytesRead);
}

/// <summary>Hits and misses of a cache since the store opened.</summary>
internal readonly record struct CacheHits(long Hits, long Misses)
{
    /// <summary>Hits over lookups; null with no lookup.</summary>
    public double? HitRate => Hits + Misses > 0 ? (double)Hits / (Hits + Misses) : null;

    /// <summary>The counts since <paramref name="earlier"/>.</summary>
    public CacheHits Since(CacheHits earlier) => new(Hits - earlier.Hits, Misses - earlier.Misses);
}

// Reads a MemorySample. Linux figures come from /proc/self (one small file and a directory listing);
// elsewhere the runtime's own (working set, thread count) stand in.
internal static class ProcessMemory
{
    public static MemorySample Read(TimeSpan elapsed, EngineMemory memory)
    {
        var (resident, @private, mapped, threads) = ResidentAndThreads();
        return new MemorySample(
            elapsed,
            resident,
            @private,
            mapped,
            GC.GetTotalMemory(forceFullCollection: false),
            GC.GetGCMemoryInfo().TotalCommittedBytes,
            RocksDbMemory.Of(memory),
            memory.LuceneRamBufferBytes,
            memory.PrefetchHeldBytes,
            threads,
            OpenFiles());
    }

    private static (long Resident, long Private, long MappedFiles, int Threads) ResidentAndThreads()
    {
        if (!OperatingSystem.IsLinux())
        {
            using var self = System.Diagnostics.Process.GetCurrentProcess();
            return (Environment.WorkingSet, self.PrivateMemorySize64, 0, self.Threads.Count);
        }

        long resident = 0, anonymous = 0, shared = 0, files = 0;
        var threads = 0;
        foreach (var line in File.ReadLines("/proc/self/status"))
        {
            // "VmRSS:\t  123456 kB", "RssAnon:\t 1234 kB", "Threads:\t42"
            var colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon < 0)
            {
                continue;
            }

            switch (line.AsSpan(0, colon))
            {
                case "VmRSS": resident = Kilobytes(line, colon); break;
                case "RssAnon": anonymous = Kilobytes(line, colon); break;
                case "RssShmem": shared = Kilobytes(line, colon); break;
                case "RssFile": files = Kilobytes(line, colon); break;
                case "Threads": threads = int.Parse(line.AsSpan(colon + 1).Trim(), NumberStyles.None, CultureInfo.InvariantCulture); break;
            }
        }

        return (resident, anonymous + shared, files, threads);
    }

    private static long Kilobytes(string line, int colon) =>
        long.Parse(line.AsSpan(colon + 1).Trim().TrimEnd("kB").Trim(), NumberStyles.None, CultureInfo.InvariantCulture) * 1024;

    private static int OpenFiles()
    {
        if (!OperatingSystem.IsLinux())
        {
            return 0;
        }

        // The listing's own descriptor is counted too: one more than the process holds otherwise.
        var count = 0;
        foreach (var _ in Directory.EnumerateFileSystemEntries("/proc/self/fd"))
        {
            count++;
        }

        return count - 1;
    }
}
