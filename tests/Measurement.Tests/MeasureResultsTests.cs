using Indexing.Measurement;
using Indexing.Measurement.Measure;

namespace Indexing.Measurement.Tests;

// The statistics of the measure command's table: medians per figure, ratios from median wall times.
public sealed class MeasureResultsTests
{
    private static RebuildFigures Run(RebuildMode mode, double seconds, double? stallSeconds = null, long? peak = null, double? meanL = null, int? fixedL = null) => new(
        mode, "local", TimeSpan.FromSeconds(seconds), Documents: 100, Bytes: 10_000_000,
        stallSeconds is { } s ? TimeSpan.FromSeconds(s) : null, peak, null, null, meanL, PeakWorkingSetBytes: 1 << 20, [], [], null, null, FixedConcurrency: fixedL);

    private static Dictionary<RebuildMode, List<RebuildFigures>> Runs() => new()
    {
        [RebuildMode.Sequential] = [Run(RebuildMode.Sequential, 12, 3), Run(RebuildMode.Sequential, 10, 2), Run(RebuildMode.Sequential, 30, 1)],
        [RebuildMode.FixedBatch] = [Run(RebuildMode.FixedBatch, 8, 1, peak: 300), Run(RebuildMode.FixedBatch, 10, 1, peak: 100)],
        [RebuildMode.Adaptive] = [Run(RebuildMode.Adaptive, 6, 0.5, peak: 200, meanL: 4), Run(RebuildMode.Adaptive, 7, 0.5, peak: 400, meanL: 2), Run(RebuildMode.Adaptive, 5, 0.5, peak: 100, meanL: 3)],
        [RebuildMode.ReadOnly] = [Run(RebuildMode.ReadOnly, 2, peak: 50, meanL: 8)],
        [RebuildMode.IndexOnly] = [Run(RebuildMode.IndexOnly, 4, 0), Run(RebuildMode.IndexOnly, 5, 0), Run(RebuildMode.IndexOnly, 6, 0)],
        [RebuildMode.BestFixed] = [Run(RebuildMode.BestFixed, 1.5, meanL: 16, fixedL: 16), Run(RebuildMode.BestFixed, 1.8, meanL: 32, fixedL: 32)],
        [RebuildMode.LuceneOnly] = [Run(RebuildMode.LuceneOnly, 3), Run(RebuildMode.LuceneOnly, 7), Run(RebuildMode.LuceneOnly, 3.5)],
    };

    [Fact]
    public void Summarise_MediansPerFigureAndRatiosFromMedianWallTimes()
    {
        var summaries = MeasureResults.Summarise(Runs()).ToDictionary(s => s.Mode);

        Assert.Equal(MeasureResults.Modes, summaries.Keys);
        Assert.Equal(12, summaries[RebuildMode.Sequential].WallSeconds);        // odd count: the middle one, not the mean (17.3)
        Assert.Equal(9, summaries[RebuildMode.FixedBatch].WallSeconds);         // even count: the mean of the two middle ones
        Assert.Equal(6, summaries[RebuildMode.Adaptive].WallSeconds);
        Assert.Equal(6.0 / 9, summaries[RebuildMode.Adaptive].RatioToFixedBatch!.Value, 12);
        // The bound is the slower of BestFixed (1.65 s) and IndexOnly (median 5 s); ReadOnly is no part of it.
        Assert.Equal(6.0 / 5, summaries[RebuildMode.Adaptive].RatioToBound!.Value, 12);
        Assert.Equal(1.0, summaries[RebuildMode.IndexOnly].RatioToBound!.Value, 12);
        Assert.Equal(0.4, summaries[RebuildMode.ReadOnly].RatioToBound!.Value, 12);
        Assert.Equal(16, summaries[RebuildMode.BestFixed].FixedConcurrency);
        Assert.True(summaries[RebuildMode.BestFixed].IsBound && summaries[RebuildMode.ReadOnly].IsReference && !summaries[RebuildMode.ReadOnly].IsBound);
        // LuceneOnly (median 3.5 s) is a reference, never the bound: IndexOnly (5 s) still is.
        Assert.True(summaries[RebuildMode.LuceneOnly].IsReference && !summaries[RebuildMode.LuceneOnly].IsBound);
        Assert.Equal(3.5 / 5, summaries[RebuildMode.LuceneOnly].RatioToBound!.Value, 12);
        Assert.Equal(10, summaries[RebuildMode.Sequential].MinWallSeconds);
        Assert.Equal(30, summaries[RebuildMode.Sequential].MaxWallSeconds);
        Assert.Equal(200, summaries[RebuildMode.Adaptive].PeakInFlightAndBufferedBytes);
        Assert.Equal(3, summaries[RebuildMode.Adaptive].MeanConcurrency);
        Assert.Equal(10_000_000 / 1e6 / 6, summaries[RebuildMode.Adaptive].MegabytesPerSecond, 12);
        // Figures a mode does not have stay unknown rather than becoming 0.
        Assert.Null(summaries[RebuildMode.ReadOnly].IndexerStallPercent);
        Assert.Null(summaries[RebuildMode.IndexOnly].MeanConcurrency);
        Assert.Equal(12, summaries[RebuildMode.Sequential].MedianRun.Elapsed.TotalSeconds);
        Assert.Equal(8, summaries[RebuildMode.FixedBatch].MedianRun.Elapsed.TotalSeconds); // the lower middle one
    }

    [Fact]
    public void Summarise_OnlyReadingMeasured_RatiosToWhatWasNotMeasuredAreUnknown()
    {
        var summaries = MeasureResults.Summarise(Runs(), [RebuildMode.ReadOnly, RebuildMode.BestFixed]);

        Assert.Equal([RebuildMode.ReadOnly, RebuildMode.BestFixed], summaries.Select(s => s.Mode));
        Assert.All(summaries, s => Assert.Null(s.RatioToFixedBatch));
        // The bound is BestFixed alone now.
        Assert.Equal(2 / 1.65, summaries[0].RatioToBound!.Value, 12);
    }

    [Fact]
    public void Summarise_AModeWithoutRuns_IsRefusedNamingIt()
    {
        var runs = Runs();
        runs[RebuildMode.ReadOnly].Clear();

        var error = Assert.Throws<ArgumentException>(() => MeasureResults.Summarise(runs));

        Assert.Contains("mode ReadOnly has no run; every mode measured needs at least one", error.Message, StringComparison.Ordinal);
    }
}
