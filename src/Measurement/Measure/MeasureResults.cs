using Indexing.Measurement;

namespace Indexing.Measurement.Measure;

/// <summary>
/// The medians of one strategy's (or bound's) runs, and its ratios to FixedBatch and to the bound
/// max(BestFixed, IndexOnly) computed from median wall times (null when what they divide by was not
/// measured). Every figure is the median of that figure over the runs, taken on its own (so a row
/// is not necessarily one run's figures).
/// </summary>
public sealed record ModeSummary(
    RebuildMode Mode,
    IReadOnlyList<RebuildFigures> Runs,
    double WallSeconds,
    double MinWallSeconds,
    double MaxWallSeconds,
    double? RatioToFixedBatch,
    double? RatioToBound,
    double DocumentsPerSecond,
    double MegabytesPerSecond,
    double? IndexerStallPercent,
    long? PeakInFlightAndBufferedBytes,
    double? MeanConcurrency,
    long PeakWorkingSetBytes,
    double? MeanCoresBusy = null)
{
    /// <summary>The bounds are not strategies: they are what reading alone (at the best fixed L) and indexing alone take.</summary>
    public bool IsBound => Mode is RebuildMode.BestFixed or RebuildMode.IndexOnly;

    /// <summary>
    /// Not a rebuild: a bound, ReadOnly (reading alone with the controller choosing L, judged against
    /// BestFixed), or LuceneOnly (Lucene.Net alone, which IndexOnly is judged against).
    /// </summary>
    public bool IsReference => IsBound || Mode is RebuildMode.ReadOnly or RebuildMode.LuceneOnly;

    /// <summary>The run whose wall time is the median (the lower middle one for an even count): the run whose timeline is written.</summary>
    public RebuildFigures MedianRun => Runs.OrderBy(r => r.Elapsed).ElementAt((Runs.Count - 1) / 2);

    /// <summary>BestFixed: the fixed L of its median run; null for the other modes.</summary>
    public int? FixedConcurrency => MedianRun.FixedConcurrency;
}

/// <summary>Medians and ratios over every mode's runs.</summary>
public static class MeasureResults
{
    /// <summary>Every mode, in the order they run and are reported: the three strategies, ReadOnly, the two bounds, then LuceneOnly.</summary>
    public static IReadOnlyList<RebuildMode> Modes { get; } =
        [RebuildMode.Sequential, RebuildMode.FixedBatch, RebuildMode.Adaptive, RebuildMode.ReadOnly, RebuildMode.IndexOnly, RebuildMode.BestFixed, RebuildMode.LuceneOnly];

    /// <summary>
    /// One summary per mode of <paramref name="modes"/> (default: <see cref="Modes"/>), in that
    /// order; every one of them needs at least one run.
    /// </summary>
    public static IReadOnlyList<ModeSummary> Summarise(IReadOnlyDictionary<RebuildMode, List<RebuildFigures>> runs, IReadOnlyList<RebuildMode>? modes = null)
    {
        modes ??= Modes;
        foreach (var mode in modes)
        {
            if (!runs.TryGetValue(mode, out var list) || list.Count == 0)
            {
                throw new ArgumentException($"mode {mode} has no run; every mode measured needs at least one.", nameof(runs));
            }
        }

        double Wall(RebuildMode mode) => Median(runs[mode].Select(r => r.Elapsed.TotalSeconds));
        double? Measured(RebuildMode mode) => modes.Contains(mode) ? Wall(mode) : null;
        var fixedBatch = Measured(RebuildMode.FixedBatch);
        var bounds = new[] { Measured(RebuildMode.BestFixed), Measured(RebuildMode.IndexOnly) }.OfType<double>().ToList();
        double? bound = bounds.Count > 0 ? bounds.Max() : null;
        return [.. modes.Select(mode =>
        {
            var list = runs[mode];
            var wall = Wall(mode);
            return new ModeSummary(
                mode,
                list,
                wall,
                list.Min(r => r.Elapsed.TotalSeconds),
                list.Max(r => r.Elapsed.TotalSeconds),
                wall / fixedBatch,
                wall / bound,
                Median(list.Select(r => r.DocumentsPerSecond)),
                Median(list.Select(r => r.MegabytesPerSecond)),
                RebuildFigures.Median(list.Select(r => r.IndexerStallPercent)),
                RebuildFigures.Median(list.Select(r => (double?)r.PeakInFlightAndBufferedBytes)) is { } peak ? (long)Math.Round(peak) : null,
                RebuildFigures.Median(list.Select(r => r.MeanConcurrency)),
                (long)Math.Round(Median(list.Select(r => (double)r.PeakWorkingSetBytes))),
                RebuildFigures.Median(list.Select(r => r.MeanCoresBusy)));
        })];
    }

    /// <summary>The median: the middle value, or the mean of the two middle ones for an even count.</summary>
    public static double Median(IEnumerable<double> values) =>
        RebuildFigures.Median(values.Select(v => (double?)v)) ?? throw new ArgumentException("the median of no values is undefined.", nameof(values));
}
