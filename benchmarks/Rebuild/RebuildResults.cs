using System.Collections.Concurrent;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

// The figures BenchmarkDotNet does not measure itself (docs/s, stall, bytes in flight, concurrency,
// RSS, foreground latency), kept per benchmark class, case and mode for the custom columns. A
// static works because the rebuild benchmarks run in process (RebuildConfig).
internal static class RebuildResults
{
    private static readonly ConcurrentDictionary<string, ConcurrentQueue<RebuildFigures>> _figures = new();

    public static void Add(string benchmark, RebuildCase rebuildCase, RebuildMode mode, RebuildFigures figures) =>
        _figures.GetOrAdd(Key(benchmark, rebuildCase.ToString(), mode.ToString()), _ => new()).Enqueue(figures);

    public static IReadOnlyList<RebuildFigures> Get(string benchmark, string rebuildCase, string mode) =>
        _figures.TryGetValue(Key(benchmark, rebuildCase, mode), out var runs) ? [.. runs] : [];

    /// <summary>Median of a figure over the runs that have it; null when none has.</summary>
    public static double? Median(IEnumerable<RebuildFigures> runs, Func<RebuildFigures, double?> figure) =>
        RebuildFigures.Median(runs.Select(figure));

    private static string Key(string benchmark, string rebuildCase, string mode) => $"{benchmark}|{rebuildCase}|{mode}";
}
