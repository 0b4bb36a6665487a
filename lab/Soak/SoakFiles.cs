using System.Globalization;
using System.Text;
using System.Text.Json;
using Indexing.Indexer;
using Indexing.Measurement;
using Indexing.Storage;

namespace Indexing.Lab.Soak;

// The scale run's files, each replaced whole: scale-LABEL.csv (one row a second), .svg (the same as
// panels, through the project's TimelineFiles), .json (the report) and .md (the report, as
// benchmarks/results/scale-10GiB-default.md; see benchmarks/results/README.md, "Scale and memory").
internal static class SoakFiles
{
    private const double MiB = 1 << 20;
    private static readonly JsonSerializerOptions _json = new() { WriteIndented = true, PropertyNamingPolicy = JsonNamingPolicy.CamelCase };

    private static readonly TimelineColumn<SoakSample>[] _columns =
    [
        new("elapsed_s", s => s.Elapsed.TotalSeconds.ToString("0.0", CultureInfo.InvariantCulture)),
        new("phase", s => s.Phase),
        Bytes("rss_bytes", s => s.Memory.ResidentBytes),
        Bytes("private_bytes", s => s.Memory.PrivateBytes),
        Bytes("mapped_file_bytes", s => s.Memory.MappedFileBytes),
        Bytes("gc_heap_bytes", s => s.Memory.GcHeapBytes),
        Bytes("gc_committed_bytes", s => s.Memory.GcCommittedBytes),
        Bytes("block_cache_bytes", s => s.Memory.Store.BlockCacheUsageBytes),
        Bytes("block_cache_pinned_bytes", s => s.Memory.Store.BlockCachePinnedBytes),
        Bytes("row_cache_bytes", s => s.Memory.Store.RowCacheUsageBytes),
        Bytes("memtable_bytes", s => s.Memory.Store.MemtableBytes),
        Bytes("table_readers_bytes", s => s.Memory.Store.TableReadersBytes),
        Bytes("lucene_ram_buffer_bytes", s => s.Memory.LuceneRamBufferBytes),
        Bytes("prefetch_held_bytes", s => s.Memory.PrefetchHeldBytes),
        new("threads", s => s.Memory.Threads.ToString(CultureInfo.InvariantCulture)),
        new("open_files", s => s.Memory.OpenFiles.ToString(CultureInfo.InvariantCulture)),
        TimelineColumn<SoakSample>.Number("rebuild_fraction", s => s.RebuildFraction, "0.0000"),
        TimelineColumn<SoakSample>.Number("rebuild_mb_per_s", s => s.RebuildMegabytesPerSecond, "0.0"),
        new("foreground_gets", s => s.ForegroundGets.ToString(CultureInfo.InvariantCulture)),
        TimelineColumn<SoakSample>.Number("foreground_p99_ms", s => s.ForegroundP99?.TotalMilliseconds, "0.000"),
        TimelineColumn<SoakSample>.Number("foreground_block_cache_hit_pct", s => s.ForegroundBlockCache.HitRate * 100, "0.0"),
        TimelineColumn<SoakSample>.Number("row_cache_hit_pct", s => s.RowCache.HitRate * 100, "0.0"),
        TimelineColumn<SoakSample>.Number("load_average", s => s.LoadAverage, "0.00"),
    ];

    public static void Write(SoakSettings settings, SoakReport report, IReadOnlyList<SoakSample> samples)
    {
        Directory.CreateDirectory(settings.OutputDirectory);
        var bound = report.Bound.TotalBytes / MiB;
        TimelinePanel<SoakSample>[] panels =
        [
            new("process memory MiB", [
                new("RSS", "#b3261e", s => s.Memory.ResidentBytes / MiB),
                new("private", "#6b1a14", s => s.Memory.PrivateBytes / MiB),
                new("mapped files", "#c9a227", s => s.Memory.MappedFileBytes / MiB),
                new("bound", "#e8a09a", _ => bound),
                new("GC heap", "#2f6fdf", s => s.Memory.GcHeapBytes / MiB),
                new("GC committed", "#7aa6ef", s => s.Memory.GcCommittedBytes / MiB)]),
            new("RocksDB MiB", [
                new("block cache", "#1b7f3b", s => s.Memory.Store.BlockCacheUsageBytes / MiB),
                new("pinned", "#7fbf7f", s => s.Memory.Store.BlockCachePinnedBytes / MiB),
                new("memtables", "#8e44ad", s => s.Memory.Store.MemtableBytes / MiB),
                new("table readers", "#8a6d00", s => s.Memory.Store.TableReadersBytes / MiB),
                new("row cache", "#16a085", s => s.Memory.Store.RowCacheUsageBytes / MiB)]),
            new("Lucene RAM buffer and prefetch held MiB", [
                new("Lucene buffer", "#d9822b", s => s.Memory.LuceneRamBufferBytes / MiB),
                new("prefetch held", "#555555", s => s.Memory.PrefetchHeldBytes / MiB)]),
            new("rebuild progress %", [new("progress", "#1f77b4", s => s.RebuildFraction * 100)]),
            new("foreground Get p99 ms", [new("p99", "#ff7f0e", s => s.ForegroundP99?.TotalMilliseconds)]),
            new("foreground cache hit %", [
                new("block cache", "#1b7f3b", s => s.ForegroundBlockCache.HitRate * 100),
                new("row cache", "#16a085", s => s.RowCache.HitRate * 100)]),
            new("threads and open files", [
                new("threads", "#1f77b4", s => s.Memory.Threads),
                new("open files", "#9467bd", s => s.Memory.OpenFiles)]),
        ];

        AtomicFile.ReplaceByPath(settings.FilePath("csv"), temp => TimelineFiles.WriteCsv(temp, samples, _columns));
        AtomicFile.ReplaceByPath(settings.FilePath("svg"), temp => TimelineFiles.WriteSvg(
            temp, $"scale run {settings.Label}: {ByteSize.Format(report.Dataset.Bytes)} of {report.Dataset.Shape}, {report.Malloc}", samples, s => s.Elapsed, panels, s => s.Phase));
        AtomicFile.ReplaceByPath(settings.FilePath("json"), temp => File.WriteAllText(temp, JsonSerializer.Serialize(report, _json)));
        AtomicFile.ReplaceByPath(settings.FilePath("md"), temp => File.WriteAllText(temp, Markdown(report)));
    }

    /// <summary>The report as the section it becomes in benchmarks/results/README.md ("Scale and memory").</summary>
    public static string Markdown(SoakReport r)
    {
        var m = r.Memory;
        var b = r.Bound;
        var text = new StringBuilder();
        text.Append(CultureInfo.InvariantCulture, $"### {r.Label}\n\n");
        text.Append(CultureInfo.InvariantCulture, $"- Machine: {r.Machine.Cores} cores, {ByteSize.Format(r.Machine.MemoryBytes)}, {r.Machine.Os}, {r.Machine.Runtime}, {r.Machine.Gc} GC.\n");
        text.Append(CultureInfo.InvariantCulture, $"- Load average (1 min) during the rebuild: mean {Fixed(r.LoadAverageDuringRebuildMean)}, max {Fixed(r.LoadAverageDuringRebuildMax)}; at the end {Fixed(r.Machine.LoadAverageAtEnd)}{((r.LoadAverageDuringRebuildMax ?? 0) > 1.5 ? " (above 1.5: under load, indicative)" : string.Empty)}.\n");
        text.Append(CultureInfo.InvariantCulture, $"- Allocator: {r.Malloc}; RocksDB library {r.RocksDbLibrary ?? "-"}.\n");
        text.Append(CultureInfo.InvariantCulture, $"- Store: {r.StoreOptions}.\n");
        text.Append(CultureInfo.InvariantCulture, $"- Dataset: {r.Dataset.Documents:N0} {r.Dataset.Shape} documents, {ByteSize.Format(r.Dataset.Bytes)} (seed {r.Dataset.Seed}); loaded at {r.LoadMegabytesPerSecond:0.0} MB/s.\n\n");
        text.Append("| figure | value |\n| --- | ---: |\n");
        var rebuild = r.Rebuild;
        Row(text, "rebuild", $"{rebuild.Phase}, verify {(rebuild.Consistent ? "consistent" : "INCONSISTENT")}");
        Row(text, "bulk phase", $"{rebuild.BulkSeconds:0.0} s, {rebuild.BulkMegabytesPerSecond:0.0} MB/s, {rebuild.BulkDocumentsPerSecond:N0} docs/s");
        Row(text, "whole rebuild", $"{rebuild.TotalSeconds:0.0} s");
        Row(text, "live traffic during it", $"{rebuild.Queries:N0} queries ({rebuild.FailedQueries:N0} failed), {rebuild.Writes:N0} writes");
        Row(text, "foreground Get p50 / p99 idle", $"{rebuild.IdleGetP50Milliseconds:0.00} / {rebuild.IdleGetP99Milliseconds:0.00} ms");
        Row(text, "foreground Get p99 in the bulk phase", rebuild.BulkGetP99Milliseconds is { } p99 ? $"{p99:0.00} ms" : "-");
        Row(text, "peak RSS", $"{ByteSize.Format(m.PeakResidentBytes)} ({m.PeakPhase}); during the rebuild {ByteSize.Format(m.PeakResidentDuringRebuildBytes)}; {r.PeakResidentOverBound:0.00} of the bound");
        Row(text, "peak private memory (RSS without mapped files)", $"{ByteSize.Format(m.PeakPrivateBytes)} ({m.PeakPrivatePhase}); final {ByteSize.Format(m.FinalPrivateBytes)}");
        Row(text, "peak mapped files (Lucene's segments, binaries; reclaimable)", ByteSize.Format(m.PeakMappedFileBytes));
        Row(text, "memory bound", $"{ByteSize.Format(b.TotalBytes)} = budget {ByteSize.Format(b.PrefetchBudgetBytes)} + block cache {ByteSize.Format(b.BlockCacheBytes)} + row cache {ByteSize.Format(b.RowCacheBytes)} + memtables {ByteSize.Format(b.MemtableBytes)} + Lucene {ByteSize.Format(b.LuceneRamBufferBytes)} + overhead {ByteSize.Format(b.FixedOverheadBytes)}");
        Row(text, "peak private memory / bound", $"{r.PeakOverBound:0.00} ({(r.PeakOverBound <= 1 ? "within" : "OVER")})");
        Row(text, "final RSS", ByteSize.Format(m.FinalResidentBytes));
        Row(text, "RSS at 50% / 100% of the rebuild", $"{Size(m.ResidentAtHalfBytes)} / {Size(m.ResidentAtEndBytes)}");
        Row(text, "private memory at 50% / 100% of the rebuild", $"{Size(m.PrivateAtHalfBytes)} / {Size(m.PrivateAtEndBytes)}");
        Row(text, "private memory growth over the second half", r.SecondHalfGrowth is { } growth
            ? $"{growth * 100:+0.0;-0.0}% ({(growth <= SoakReport.MaxSecondHalfGrowth ? "flat: at most 10%" : "NOT flat: over 10%")})"
            : "- (no sample at one of the marks)");
        Row(text, "RSS growth over the second half", r.ResidentSecondHalfGrowth is { } rssGrowth
            ? $"{rssGrowth * 100:+0.0;-0.0}% (mapped index files included)"
            : "- (no sample at one of the marks)");
        Row(text, "unaccounted (private memory minus the bounded parts), at most", $"{ByteSize.Format(m.PeakUnaccountedBytes)}: the measured fixed overhead");
        Row(text, "peak GC heap / committed", $"{ByteSize.Format(m.PeakGcHeapBytes)} / {ByteSize.Format(m.PeakGcCommittedBytes)}");
        Row(text, "peak block cache / memtables / table readers / row cache", $"{ByteSize.Format(m.PeakBlockCacheBytes)} / {ByteSize.Format(m.PeakMemtableBytes)} / {ByteSize.Format(m.PeakTableReadersBytes)} / {ByteSize.Format(m.PeakRowCacheBytes)}");
        Row(text, "peak Lucene RAM buffer / prefetch held", $"{ByteSize.Format(m.PeakLuceneRamBufferBytes)} / {ByteSize.Format(m.PeakPrefetchHeldBytes)}");
        Row(text, "peak threads / open files", $"{m.PeakThreads} / {m.PeakOpenFiles}");
        foreach (var caches in r.Caches)
        {
            Row(text, $"foreground Gets {caches.Phase} the rebuild ({caches.Seconds} s)",
                $"{caches.Gets:N0} Gets; block cache hits {Percent(caches.ForegroundBlockCache.HitRate)}, row cache hits {Percent(caches.RowCache.HitRate)}; median per-second p99 {(caches.MedianSecondP99Milliseconds is { } ms ? $"{ms:0.00} ms" : "-")}");
        }

        text.Append('\n');
        return text.ToString();
    }

    private static void Row(StringBuilder text, string figure, string value) => text.Append(CultureInfo.InvariantCulture, $"| {figure} | {value} |\n");

    private static string Size(long? bytes) => bytes is { } b ? ByteSize.Format(b) : "-";

    private static string Percent(double? rate) => rate is { } r ? string.Create(CultureInfo.InvariantCulture, $"{r * 100:0.0}%") : "-";

    private static string Fixed(double? value) => value is { } v ? v.ToString("0.00", CultureInfo.InvariantCulture) : "-";

    private static TimelineColumn<SoakSample> Bytes(string header, Func<SoakSample, long> value) =>
        new(header, s => value(s).ToString(CultureInfo.InvariantCulture));
}
