using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

// The figures BenchmarkDotNet does not measure itself (docs/s, stall, bytes in flight, concurrency,
// RSS, foreground latency, the BestFixed sweep), kept per benchmark class, case and mode for the
// custom columns. A static works because the rebuild benchmarks run in process (RebuildConfig).
internal static class RebuildResults
{
    private static readonly ConcurrentDictionary<string, ConcurrentQueue<RebuildFigures>> _figures = new();

    /// <summary>Where the median runs' timelines and decisions go, beside BenchmarkDotNet's own results.</summary>
    public static string RunsDirectory => Path.Combine("BenchmarkDotNet.Artifacts", "runs");

    /// <summary>Records a run under <paramref name="name"/>: its benchmark method's name (the mode's, or a pinned run's).</summary>
    public static void Add(string benchmark, RebuildCase rebuildCase, string name, RebuildFigures figures) =>
        _figures.GetOrAdd(Key(benchmark, rebuildCase.ToString(), name), _ => new()).Enqueue(figures);

    public static IReadOnlyList<RebuildFigures> Get(string benchmark, string rebuildCase, string mode) =>
        _figures.TryGetValue(Key(benchmark, rebuildCase, mode), out var runs) ? [.. runs] : [];

    /// <summary>Median of a figure over the runs that have it; null when none has.</summary>
    public static double? Median(IEnumerable<RebuildFigures> runs, Func<RebuildFigures, double?> figure) =>
        RebuildFigures.Median(runs.Select(figure));

    /// <summary>
    /// Writes one run as <c>{table}/{case}-{name}</c>: its timeline (.csv, .svg) and, for the
    /// prefetcher's modes, its controller's decisions and the BestFixed sweep (.txt).
    /// </summary>
    public static void WriteRun(string table, RebuildCase rebuildCase, RebuildFigures run, string runName, string title)
    {
        var directory = Path.Combine(RunsDirectory, table);
        Directory.CreateDirectory(directory);
        var name = $"{rebuildCase.Shape.ToString().ToLowerInvariant()}-{rebuildCase.TargetBytes / 1_000_000}mb-{rebuildCase.Device.Name}-{runName.ToLowerInvariant()}";
        RebuildTimelineFiles.WriteCsv(Path.Combine(directory, name + ".csv"), run.Timeline);
        RebuildTimelineFiles.WriteSvg(Path.Combine(directory, name + ".svg"), title, run.Timeline);
        var text = new StringBuilder();
        text.AppendLine(CultureInfo.InvariantCulture, $"{title}: {run.Elapsed.TotalSeconds:0.00} s, {run.MegabytesPerSecond:0.0} MB/s, mean L {run.MeanConcurrency:0.00}" +
            $"{(run.IndexerStallPercent is { } stall ? $", stall {stall:0.0}%" : "")}{(run.TimeTo80PercentOfFinalRate is { } ramp ? $", 80% of final MB/s at {ramp.TotalSeconds:0.0} s" : "")}" +
            $"{(run.MeanCoresBusy is { } cores ? $", {cores:0.00} cores busy" : "")}");
        foreach (var fixedRun in run.BestFixedSweep)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"  fixed L={fixedRun.Concurrency}: {fixedRun.Elapsed.TotalSeconds:0.00} s, {fixedRun.MegabytesPerSecond:0.0} MB/s");
        }

        foreach (var decision in run.Decisions)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"  {decision.Elapsed.TotalSeconds,7:0.00} s  L={decision.ConcurrencyLimit,-3} {decision.Kind,-5} {decision.Reason}");
        }

        File.WriteAllText(Path.Combine(directory, name + ".txt"), text.ToString());
    }

    private static string Key(string benchmark, string rebuildCase, string mode) => $"{benchmark}|{rebuildCase}|{mode}";
}
