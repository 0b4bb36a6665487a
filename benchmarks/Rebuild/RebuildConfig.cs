using BenchmarkDotNet.Columns;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Reports;
using BenchmarkDotNet.Toolchains.InProcess.Emit;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// How the rebuild benchmarks run. A rebuild is a long operation: the default job is
/// monitoring-style (no pilot, no overhead, 3 measured iterations, 1 launch). It is marked default
/// so that <c>--job dry</c> on the command line replaces it (CI). The in-process toolchain is a
/// mutator applied to whichever job runs: the stores loaded in [GlobalSetup] and the figures behind
/// the custom columns are shared by every case of the run.
/// </summary>
internal class RebuildConfig : ManualConfig
{
    public RebuildConfig()
    {
        AddJob(Job.Default
            .WithStrategy(RunStrategy.Monitoring)
            .WithLaunchCount(1)
            .WithWarmupCount(0)
            .WithIterationCount(3)
            .WithId("Rebuild")
            .AsDefault());
        // The in-process toolchain gives up on a benchmark after 5 minutes by default; a BestFixed
        // sweep over 2 GiB on a slow disk takes longer than that.
        AddJob(Job.Default.WithToolchain(new InProcessEmitToolchain(TimeSpan.FromHours(2), logOutput: true)).AsMutator());
        AddColumn(RebuildColumns.DocumentsPerSecond, RebuildColumns.MegabytesPerSecond, RebuildColumns.StallPercent,
            RebuildColumns.PeakInFlightAndBuffered, RebuildColumns.MeanConcurrency, RebuildColumns.RampSeconds, RebuildColumns.PeakRss,
            RebuildColumns.ProcessorSeconds, RebuildColumns.CoresBusy);
        AddColumn(StatisticColumn.Median);
        HideColumns(Column.Error, Column.StdDev, Column.StdErr, Column.RatioSD);
        // The case labels ("rare-giants 60 MB, network-disk") are longer than the default 20 characters.
        WithSummaryStyle(SummaryStyle.Default.WithMaxParameterColumnWidth(40));
    }
}

/// <summary>
/// The rebuild table: <see cref="RebuildConfig"/> plus the ratios to the bound max(BestFixed,
/// IndexOnly) and to BestFixed's MB/s, and the garbage collector's pauses (a rebuild allocates its
/// documents during the run; IndexOnly holds them from before its clock starts).
/// </summary>
internal sealed class RebuildTableConfig : RebuildConfig
{
    public RebuildTableConfig() => AddColumn(
        new RatioToBoundColumn(), RebuildColumns.VersusBestFixed, RebuildColumns.GcPausePercent, RebuildColumns.GcMeanPause, RebuildColumns.Commits);
}

/// <summary>The live-traffic table: <see cref="RebuildConfig"/> plus foreground Get latency idle and during the rebuild.</summary>
internal sealed class LiveTrafficConfig : RebuildConfig
{
    public LiveTrafficConfig() => AddColumn(
        RebuildColumns.ForegroundP50Idle, RebuildColumns.ForegroundP99Idle, RebuildColumns.ForegroundP50During, RebuildColumns.ForegroundP99During,
        RebuildColumns.ForegroundP99Ratio, RebuildColumns.GcPausePercent, RebuildColumns.GcMeanPause);
}
