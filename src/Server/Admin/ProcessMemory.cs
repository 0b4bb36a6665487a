using System.Globalization;
using Indexing.Indexer;
using Indexing.Storage;

namespace Indexing.Server.Admin;

/// <summary>
/// One reading of where the process's memory is: the OS's view (RSS, threads, open files), the .NET
/// heap, RocksDB's own figures, the indexers' RAM buffers and the bytes prefetches hold. Taken every
/// second by the admin page's <see cref="MemoryMonitor"/> and by <c>soak</c>.
/// </summary>
/// <param name="Elapsed">Since the sampler started.</param>
/// <param name="ResidentBytes">Resident set size (VmRSS): what the OS counts against the process.</param>
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
    long GcHeapBytes,
    long GcCommittedBytes,
    StoreMemory Store,
    long LuceneRamBufferBytes,
    long PrefetchHeldBytes,
    int Threads,
    int OpenFiles);

// Reads a MemorySample. Linux figures come from /proc/self (one small file and a directory listing);
// elsewhere the runtime's own (working set, thread count) stand in.
internal static class ProcessMemory
{
    public static MemorySample Read(TimeSpan elapsed, DocumentStore store, IndexManager indexes, PrefetchRegistry prefetches)
    {
        var (resident, threads) = ResidentAndThreads();
        long held = 0;
        foreach (var running in prefetches.Running)
        {
            var pressure = running.Source.Pressure;
            held += pressure.InFlightBytes + pressure.BufferedBytes;
        }

        return new MemorySample(
            elapsed,
            resident,
            GC.GetTotalMemory(forceFullCollection: false),
            GC.GetGCMemoryInfo().TotalCommittedBytes,
            store.GetMemory(),
            indexes.RamBufferBytes,
            held,
            threads,
            OpenFiles());
    }

    private static (long Resident, int Threads) ResidentAndThreads()
    {
        if (!OperatingSystem.IsLinux())
        {
            using var self = System.Diagnostics.Process.GetCurrentProcess();
            return (Environment.WorkingSet, self.Threads.Count);
        }

        long resident = 0;
        var threads = 0;
        foreach (var line in File.ReadLines("/proc/self/status"))
        {
            // "VmRSS:\t  123456 kB", "Threads:\t42"
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                resident = long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), NumberStyles.None, CultureInfo.InvariantCulture) * 1024;
            }
            else if (line.StartsWith("Threads:", StringComparison.Ordinal))
            {
                threads = int.Parse(line.AsSpan(8).Trim(), NumberStyles.None, CultureInfo.InvariantCulture);
            }
        }

        return (resident, threads);
    }

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
