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
    public static readonly IColumn MeanConcurrency = new FigureColumn("Mean L", "Time-weighted mean concurrency limit of the prefetcher (BestFixed: the fixed L that won)", f => f.MeanConcurrency, "0.00");
    public static readonly IColumn RampSeconds = new FigureColumn(
        "80% at s", "Seconds until a second of the run delivered 80% of its final MB/s (the mean from 50% to 90% of the run)", f => f.TimeTo80PercentOfFinalRate?.TotalSeconds, "0.0");
    public static readonly IColumn VersusBestFixed = new BestFixedRatioColumn();
    public static readonly IColumn ProcessorSeconds = new FigureColumn(
        "CPU s", "Processor seconds the whole process used over the run (every thread), chunk loads taken out as from the wall time", f => f.ProcessorTime?.TotalSeconds, "0.00");
    public static readonly IColumn Commits = new FigureColumn(
        "Commits", "Commits the build made: the marker at its start, its bulk commits (checkpoints, the same cadence for every mode that builds through the indexer) and the last; none shown for LuceneOnly, which commits once", f => f.Commits, "0");
    public static readonly IColumn CoresBusy = new FigureColumn("Cores busy", $"CPU s over the wall time: cores busy on average (this machine has {Environment.ProcessorCount})", f => f.MeanCoresBusy, "0.00");
    public static readonly IColumn PeakRss = new FigureColumn("Peak RSS MiB", "Peak working set of the benchmark process during the run (all loaded datasets included)", f => f.PeakWorkingSetBytes / 1048576.0, "0");
    public static readonly IColumn ForegroundP50Idle = new FigureColumn("Get p50 idle ms", "Foreground Get p50 before the rebuild (3 s, same readers)", f => f.ForegroundIdle?.P50.TotalMilliseconds, "0.000");
    public static readonly IColumn ForegroundP99Idle = new FigureColumn("Get p99 idle ms", "Foreground Get p99 before the rebuild", f => f.ForegroundIdle?.P99.TotalMilliseconds, "0.000");
    public static readonly IColumn ForegroundP50During = new FigureColumn("Get p50 during ms", "Foreground Get p50 during the rebuild", f => f.ForegroundDuringRebuild?.P50.TotalMilliseconds, "0.000");
    public static readonly IColumn ForegroundP99During = new FigureColumn("Get p99 during ms", "Foreground Get p99 during the rebuild", f => f.ForegroundDuringRebuild?.P99.TotalMilliseconds, "0.000");
    public static readonly IColumn GcPausePercent = new FigureColumn(
        "GC pause %", "Share of the run every managed thread stood in a garbage collection pause (the foreground Gets too)", f => f.GcPausePercent, "0.0");
    public static readonly IColumn GcMeanPause = new FigureColumn(
        "GC mean pause ms", "Mean pause per garbage collection during the run", f => f.CollectionsDuringRun?.MeanPause.TotalMilliseconds, "0.00");
    public static readonly IColumn ForegroundP99Ratio = new FigureColumn(
        "p99 during/idle", "Foreground Get p99 during the rebuild over p99 idle (target <= 1.3 for Adaptive)", f => f.ForegroundDuringRebuild?.P99 / f.ForegroundIdle?.P99, "0.00");

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

    // MB/s over the same case's BestFixed MB/s (medians): for ReadOnly, how close the controller
    // gets to the best fixed L when reading is all there is.
    private sealed class BestFixedRatioColumn() : RebuildColumn(
        nameof(BestFixedRatioColumn),
        "x BestFixed MB/s",
        "ReadOnly's median MB/s over the median MB/s of BestFixed (reading alone at the fastest fixed L) of the same case",
        priority: 1)
    {
        protected override string Value(Summary summary, BenchmarkCase benchmarkCase)
        {
            if (ModeOf(benchmarkCase) is not (nameof(RebuildMode.ReadOnly) or nameof(RebuildMode.BestFixed)))
            {
                return "-";
            }

            var table = benchmarkCase.Descriptor.Type.Name;
            var own = RebuildResults.Median(RebuildResults.Get(table, CaseOf(benchmarkCase), ModeOf(benchmarkCase)), f => f.MegabytesPerSecond);
            var best = RebuildResults.Median(RebuildResults.Get(table, CaseOf(benchmarkCase), nameof(RebuildMode.BestFixed)), f => f.MegabytesPerSecond);
            return own is { } o && best is { } b && b > 0 ? (o / b).ToString("0.00", CultureInfo.InvariantCulture) : "-";
        }
    }
}

// Wall time over the bound max(BestFixed, IndexOnly) of the same case: medians of the engine's
// wall times (for BestFixed, its winning run's; BenchmarkDotNet's own time for it is the whole sweep).
internal sealed class RatioToBoundColumn() : RebuildColumn(
    nameof(RatioToBoundColumn),
    "Ratio to bound",
    "Median wall time over max(BestFixed, IndexOnly) median of the same case (no strategy can go below 1)",
    priority: 1)
{
    protected override string Value(Summary summary, BenchmarkCase benchmarkCase)
    {
        var table = benchmarkCase.Descriptor.Type.Name;
        var caseName = RebuildColumns.CaseOf(benchmarkCase);
        double? Wall(string mode) => RebuildResults.Median(RebuildResults.Get(table, caseName, mode), f => f.Elapsed.TotalSeconds);

        var own = Wall(RebuildColumns.ModeOf(benchmarkCase));
        var bound = new[] { Wall(nameof(RebuildMode.BestFixed)), Wall(nameof(RebuildMode.IndexOnly)) }.OfType<double>().DefaultIfEmpty().Max();
        return own is { } o && bound > 0 ? (o / bound).ToString("0.00", CultureInfo.InvariantCulture) : "-";
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
