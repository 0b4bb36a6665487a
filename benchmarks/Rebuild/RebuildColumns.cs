using System.Globalization;
using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Running;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

// The custom columns: each shows the median, over the case's recorded runs, of one figure the
// measurement engine returned (BenchmarkDotNet's own columns give the wall time and its ratio to
// the FixedBatch baseline).
internal static class RebuildColumns
{
    public static readonly IColumn DocumentsPerSecond = new FigureColumn("docs/s", "Documents indexed (or read, for ReadOnly) per second of the run", f => f.DocumentsPerSecond, "0");
    public static readonly IColumn MegabytesPerSecond = new FigureColumn("MB/s", "Document body MB (10^6 bytes) per second of the run", f => f.MegabytesPerSecond, "0.0");
    public static readonly IColumn StallPercent = new FigureColumn("Stall %", "Share of the run the indexing threads waited for input", f => f.IndexerStallPercent, "0.0");
    public static readonly IColumn PeakInFlightAndBuffered = new FigureColumn(
        "Peak in flight+buffered MiB", "Prefetch high-water mark of bytes in flight + buffered (budget 256 MiB; a lone oversized admission is not counted)", f => f.PeakInFlightAndBufferedBytes / 1048576.0, "0.0");
    public static readonly IColumn MeanConcurrency = new FigureColumn("Mean L", "Time-weighted mean concurrency limit of the prefetcher", f => f.MeanConcurrency, "0.00");
    public static readonly IColumn PeakRss = new FigureColumn("Peak RSS MiB", "Peak working set of the benchmark process during the run (all loaded datasets included)", f => f.PeakWorkingSetBytes / 1048576.0, "0");
    public static readonly IColumn ForegroundP50Idle = new FigureColumn("Get p50 idle ms", "Foreground Get p50 before the rebuild (3 s, same readers)", f => f.ForegroundIdle?.P50.TotalMilliseconds, "0.000");
    public static readonly IColumn ForegroundP99Idle = new FigureColumn("Get p99 idle ms", "Foreground Get p99 before the rebuild", f => f.ForegroundIdle?.P99.TotalMilliseconds, "0.000");
    public static readonly IColumn ForegroundP50During = new FigureColumn("Get p50 during ms", "Foreground Get p50 during the rebuild", f => f.ForegroundDuringRebuild?.P50.TotalMilliseconds, "0.000");
    public static readonly IColumn ForegroundP99During = new FigureColumn("Get p99 during ms", "Foreground Get p99 during the rebuild", f => f.ForegroundDuringRebuild?.P99.TotalMilliseconds, "0.000");
    public static readonly IColumn ForegroundP99Ratio = new FigureColumn(
        "p99 during/idle", "Foreground Get p99 during the rebuild over p99 idle (target <= 1.3 for Adaptive)", f => f.ForegroundDuringRebuild?.P99 / f.ForegroundIdle?.P99, "0.00");
    public static readonly IColumn MegabytesPerSecondVersusUnloaded = new UnloadedRatioColumn();

    public static string CaseOf(BenchmarkCase benchmarkCase) => benchmarkCase.Parameters["Case"]?.ToString() ?? "";

    public static string ModeOf(BenchmarkCase benchmarkCase) => benchmarkCase.Descriptor.WorkloadMethod.Name;

    // One figure of the engine's result, median over the case's runs.
    private sealed class FigureColumn(string name, string legend, Func<RebuildFigures, double?> figure, string format)
        : RebuildColumn($"{nameof(FigureColumn)}.{name}", name, legend, priority: 0)
    {
        protected override string Value(Summary summary, BenchmarkCase benchmarkCase)
        {
            var runs = RebuildResults.Get(benchmarkCase.Descriptor.Type.Name, CaseOf(benchmarkCase), ModeOf(benchmarkCase));
            return RebuildResults.Median(runs, figure)?.ToString(format, CultureInfo.InvariantCulture) ?? "-";
        }
    }

    // The live run's MB/s over the same strategy's MB/s without foreground load (RebuildBenchmarks,
    // same case), when both ran in this process; target >= 0.8 for Adaptive.
    private sealed class UnloadedRatioColumn() : RebuildColumn(
        nameof(UnloadedRatioColumn),
        "MB/s vs unloaded",
        "MB/s under the foreground load over the same strategy's MB/s without it (RebuildBenchmarks in the same run)",
        priority: 1)
    {
        protected override string Value(Summary summary, BenchmarkCase benchmarkCase)
        {
            var loaded = RebuildResults.Median(RebuildResults.Get(benchmarkCase.Descriptor.Type.Name, CaseOf(benchmarkCase), ModeOf(benchmarkCase)), f => f.MegabytesPerSecond);
            var unloaded = RebuildResults.Median(RebuildResults.Get(nameof(RebuildBenchmarks), CaseOf(benchmarkCase), ModeOf(benchmarkCase)), f => f.MegabytesPerSecond);
            return loaded is { } l && unloaded is { } u && u > 0 ? (l / u).ToString("0.00", CultureInfo.InvariantCulture) : "-";
        }
    }
}

// Wall time over the bound max(ReadOnly, IndexOnly) of the same case: medians of BenchmarkDotNet's
// own measurements, so the ratio agrees with the Median column.
internal sealed class RatioToBoundColumn() : RebuildColumn(
    nameof(RatioToBoundColumn),
    "Ratio to bound",
    "Median wall time over max(ReadOnly, IndexOnly) median of the same case (no strategy can go below 1)",
    priority: 1)
{
    protected override string Value(Summary summary, BenchmarkCase benchmarkCase)
    {
        var caseName = RebuildColumns.CaseOf(benchmarkCase);
        double? Median(string mode) => summary.BenchmarksCases
            .Where(c => RebuildColumns.ModeOf(c) == mode && RebuildColumns.CaseOf(c) == caseName)
            .Select(c => summary[c]?.ResultStatistics?.Median)
            .FirstOrDefault();

        var own = summary[benchmarkCase]?.ResultStatistics?.Median;
        var readOnly = Median(nameof(RebuildBenchmarks.ReadOnly));
        var indexOnly = Median(nameof(RebuildBenchmarks.IndexOnly));
        return own is { } o && readOnly is { } r && indexOnly is { } i && Math.Max(r, i) > 0
            ? (o / Math.Max(r, i)).ToString("0.00", CultureInfo.InvariantCulture)
            : "-";
    }
}

// What the custom columns share: always shown, numeric, dimensionless, in the Custom category;
// only the identity, legend, priority and value differ.
internal abstract class RebuildColumn(string id, string name, string legend, int priority) : IColumn
{
    public string Id => id;

    public string ColumnName => name;

    public bool AlwaysShow => true;

    public ColumnCategory Category => ColumnCategory.Custom;

    public int PriorityInCategory => priority;

    public bool IsNumeric => true;

    public UnitType UnitType => UnitType.Dimensionless;

    public string Legend => legend;

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase) => Value(summary, benchmarkCase);

    public string GetValue(Summary summary, BenchmarkCase benchmarkCase, SummaryStyle style) => Value(summary, benchmarkCase);

    public bool IsDefault(Summary summary, BenchmarkCase benchmarkCase) => false;

    public bool IsAvailable(Summary summary) => true;

    protected abstract string Value(Summary summary, BenchmarkCase benchmarkCase);
}
