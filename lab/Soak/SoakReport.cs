extern alias server;

using System.Runtime;
using System.Runtime.InteropServices;
using Indexing.Indexer;
using server::Indexing.Server.Admin;
using server::Indexing.Server.Demo;
using Indexing.Storage;

namespace Indexing.Lab.Soak;

/// <summary>
/// What a scale run showed, computed from its samples: the machine and load, the allocator, the
/// rebuild's throughput, peak RSS and peak private memory (the bound's measure), final RSS, RSS growth over the second half
/// of the rebuild, each memory component's peak, and the cache hit rates before, during and after.
/// </summary>
internal sealed record SoakReport(
    string Label,
    MachineFacts Machine,
    string Malloc,
    string? RocksDbLibrary,
    string StoreOptions,
    DatasetMarker Dataset,
    double LoadMegabytesPerSecond,
    RebuildOutcome Rebuild,
    MemoryBound Bound,
    MemoryFigures Memory,
    IReadOnlyList<PhaseCaches> Caches,
    double? LoadAverageDuringRebuildMean,
    double? LoadAverageDuringRebuildMax)
{
    /// <summary>Private memory may grow at most this much between the 50% and 100% marks of the rebuild.</summary>
    public const double MaxSecondHalfGrowth = 0.10;

    public static SoakReport From(
        SoakSettings settings, DatasetMarker dataset, StoreOptions options, MemoryBound bound, RebuildReport rebuild, IReadOnlyList<SoakSample> samples)
    {
        var during = samples.Where(s => s.Phase is "bulk" or "catch-up" or "swap").ToList();
        var half = during.FirstOrDefault(s => s.RebuildFraction >= 0.5);
        // The 100% mark: the first sample after the rebuild ended (or its last one, if none followed).
        var end = samples.FirstOrDefault(s => s.Phase == "verify" || (s.Phase == "after" && during.Count > 0)) ?? during.LastOrDefault();
        var peak = samples.MaxBy(s => s.Memory.ResidentBytes);
        var peakPrivate = samples.MaxBy(s => s.Memory.PrivateBytes);
        var bulkSeconds = rebuild.Rebuild.PhaseTimes.GetValueOrDefault(RebuildPhase.Bulk).TotalSeconds;
        var loads = during.Select(s => s.LoadAverage).OfType<double>().ToList();
        return new SoakReport(
            settings.Label,
            MachineFacts.Now(),
            RocksDbNative.DescribeMalloc(),
            RocksDbNative.LoadedLibraryPath,
            options.ToString(),
            dataset,
            dataset.LoadSeconds > 0 ? dataset.Bytes / 1e6 / dataset.LoadSeconds : 0,
            new RebuildOutcome(
                rebuild.Rebuild.Phase.ToString(),
                rebuild.Verify.IsConsistent,
                rebuild.Rebuild.DocumentsDone,
                rebuild.Rebuild.BytesDone,
                bulkSeconds,
                rebuild.Elapsed.TotalSeconds,
                bulkSeconds > 0 ? rebuild.Rebuild.BytesDone / 1e6 / bulkSeconds : 0,
                bulkSeconds > 0 ? rebuild.Rebuild.DocumentsDone / bulkSeconds : 0,
                rebuild.IdleGets.P50.TotalMilliseconds,
                rebuild.IdleGets.P99.TotalMilliseconds,
                rebuild.BulkGets?.P99.TotalMilliseconds,
                rebuild.Queries,
                rebuild.FailedQueries,
                rebuild.Writes),
            bound,
            new MemoryFigures(
                peak?.Memory.ResidentBytes ?? 0,
                peak?.Phase ?? "-",
                during.Count > 0 ? during.Max(s => s.Memory.ResidentBytes) : 0,
                samples.Count > 0 ? samples[^1].Memory.ResidentBytes : 0,
                half?.Memory.ResidentBytes,
                end?.Memory.ResidentBytes,
                samples.Count > 0 ? samples.Max(s => s.Memory.GcHeapBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.GcCommittedBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.Store.BlockCacheUsageBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.Store.MemtableBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.Store.TableReadersBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.Store.RowCacheUsageBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.LuceneRamBufferBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.PrefetchHeldBytes) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.Threads) : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.OpenFiles) : 0,
                samples.Count > 0 ? samples.Max(s => Unaccounted(s.Memory)) : 0,
                peakPrivate?.Memory.PrivateBytes ?? 0,
                peakPrivate?.Phase ?? "-",
                samples.Count > 0 ? samples[^1].Memory.PrivateBytes : 0,
                samples.Count > 0 ? samples.Max(s => s.Memory.MappedFileBytes) : 0,
                half?.Memory.PrivateBytes,
                end?.Memory.PrivateBytes),
            [CachesOf("before", samples.Where(s => s.Phase == "before")), CachesOf("during", during), CachesOf("after", samples.Where(s => s.Phase == "after"))],
            loads.Count > 0 ? loads.Average() : null,
            loads.Count > 0 ? loads.Max() : null);
    }

    /// <summary>
    /// Peak private memory over the bound: at most 1 means the accounting held. Private, not RSS:
    /// RSS also counts the pages of index files Lucene maps (RssFile), clean page cache that the
    /// kernel takes back under pressure and that grows with the index, not with any setting.
    /// </summary>
    public double PeakOverBound => Bound.TotalBytes > 0 ? (double)Memory.PeakPrivateBytes / Bound.TotalBytes : 0;

    /// <summary>Peak RSS over the bound, mapped index files included (for comparison with <see cref="PeakOverBound"/>).</summary>
    public double PeakResidentOverBound => Bound.TotalBytes > 0 ? (double)Memory.PeakResidentBytes / Bound.TotalBytes : 0;

    /// <summary>
    /// Private memory's growth from the rebuild's 50% mark to its end (a leak shows here); null when
    /// either mark was not sampled. Judged on private memory for the reason <see cref="PeakOverBound"/> is.
    /// </summary>
    public double? SecondHalfGrowth => Growth(Memory.PrivateAtHalfBytes, Memory.PrivateAtEndBytes);

    /// <summary>The same for RSS, mapped index files included (verify maps the new index at the 100% mark).</summary>
    public double? ResidentSecondHalfGrowth => Growth(Memory.ResidentAtHalfBytes, Memory.ResidentAtEndBytes);

    private static double? Growth(long? atHalf, long? atEnd) => atHalf is > 0 and { } half && atEnd is { } end ? (double)(end - half) / half : null;

    // Private memory minus what the bound's settings account for (caches, memtables, table readers,
    // the bytes the prefetch holds, the Lucene buffers): the runtime, code, the GC heap beyond the
    // prefetched documents, Lucene's merges and malloc's slack. Mapped index files are not in it.
    private static long Unaccounted(MemorySample m) =>
        m.PrivateBytes - m.Store.BlockCacheUsageBytes - m.Store.RowCacheUsageBytes - m.Store.MemtableBytes - m.Store.TableReadersBytes - m.PrefetchHeldBytes - m.LuceneRamBufferBytes;

    private static PhaseCaches CachesOf(string phase, IEnumerable<SoakSample> samples)
    {
        var list = samples.ToList();
        var block = new CacheCounts(list.Sum(s => s.ForegroundBlockCache.Hits), list.Sum(s => s.ForegroundBlockCache.Misses));
        var rows = new CacheCounts(list.Sum(s => s.RowCache.Hits), list.Sum(s => s.RowCache.Misses));
        var p99s = list.Select(s => s.ForegroundP99).OfType<TimeSpan>().Select(t => t.TotalMilliseconds).Order().ToList();
        return new PhaseCaches(phase, list.Count, list.Sum(s => s.ForegroundGets), block, rows, p99s.Count > 0 ? p99s[p99s.Count / 2] : null);
    }
}

/// <summary>The side-by-side rebuild: its end, verify's verdict, throughput and the live traffic's figures.</summary>
internal sealed record RebuildOutcome(
    string Phase,
    bool Consistent,
    long Documents,
    long Bytes,
    double BulkSeconds,
    double TotalSeconds,
    double BulkMegabytesPerSecond,
    double BulkDocumentsPerSecond,
    double IdleGetP50Milliseconds,
    double IdleGetP99Milliseconds,
    double? BulkGetP99Milliseconds,
    long Queries,
    long FailedQueries,
    long Writes);

/// <summary>Peaks and marks of the process's memory over the run.</summary>
internal sealed record MemoryFigures(
    long PeakResidentBytes,
    string PeakPhase,
    long PeakResidentDuringRebuildBytes,
    long FinalResidentBytes,
    long? ResidentAtHalfBytes,
    long? ResidentAtEndBytes,
    long PeakGcHeapBytes,
    long PeakGcCommittedBytes,
    long PeakBlockCacheBytes,
    long PeakMemtableBytes,
    long PeakTableReadersBytes,
    long PeakRowCacheBytes,
    long PeakLuceneRamBufferBytes,
    long PeakPrefetchHeldBytes,
    int PeakThreads,
    int PeakOpenFiles,
    long PeakUnaccountedBytes,
    long PeakPrivateBytes,
    string PeakPrivatePhase,
    long FinalPrivateBytes,
    long PeakMappedFileBytes,
    long? PrivateAtHalfBytes,
    long? PrivateAtEndBytes);

/// <summary>Foreground Gets in one part of the run: how many, their block cache and row cache hits, the median of their per-second p99.</summary>
internal sealed record PhaseCaches(string Phase, int Seconds, long Gets, CacheCounts ForegroundBlockCache, CacheCounts RowCache, double? MedianSecondP99Milliseconds);

/// <summary>The machine the run was on.</summary>
internal sealed record MachineFacts(string Os, string Runtime, int Cores, long MemoryBytes, string Gc, double? LoadAverageAtEnd)
{
    public static MachineFacts Now() => new(
        RuntimeInformation.OSDescription,
        RuntimeInformation.FrameworkDescription,
        Environment.ProcessorCount,
        GC.GetGCMemoryInfo().TotalAvailableMemoryBytes,
        $"{(GCSettings.IsServerGC ? "server" : "workstation")}, {(GCSettings.LatencyMode == GCLatencyMode.Batch ? "non-concurrent" : "concurrent")}",
        SoakRecorder.LoadAverage());
}
