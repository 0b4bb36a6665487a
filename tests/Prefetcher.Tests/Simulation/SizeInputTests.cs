using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The growing shape (1 KB to 100 KB along key order) on the modelled disk with a fast consumer,
/// in virtual time, with and without the size input. Tasks are byte-balanced, so document sizes
/// move L only where L documents of the recent largest size no longer fit the budget: here a
/// 1 MiB budget, 64 KiB minimum tasks and the strict fraction 1 (L largest documents within the
/// budget; the default 2 lets a few readers wait for budget, which measured better with rare
/// giants). As documents grow, the size input lowers L to what the budget can hold and the
/// budget share per task (budget / 2L) grows with it.
/// </summary>
public sealed class SizeInputTests(ITestOutputHelper output)
{
    [Fact]
    public void Growing_TightBudget_LFallsAndTaskSizeRisesWithTheDocuments()
    {
        var setup = new SimulationSetup
        {
            Shape = DocumentShape.Growing100x(400_000),
            DocumentCount = 400_000,
            Duration = TimeSpan.FromSeconds(600),
            BudgetBytes = 1 * SimulationSetup.MiB,
            IndexingBytesPerSecond = 10e9,
            Controller = new ControllerOptions { MinTaskBytes = 64 * 1024, LargeDocumentBudgetFraction = 1 },
        };

        var withSizes = PrefetchSimulation.Run(setup);
        var without = PrefetchSimulation.Run(setup with { SizesEnterController = false });

        var (sizedL, sizedTask) = LastFifth(withSizes, "sizes enter the controller");
        var (plainL, plainTask) = LastFifth(without, "sizes ignored");

        // Late documents are 50-150 KiB: at most 1 MiB / 100 KiB = 10 of them fit the budget.
        Assert.True(sizedL <= 10, $"With sizes, L averaged {sizedL:0.0} over the last fifth, above what the budget holds of 100 KiB documents.");
        Assert.True(plainL > sizedL, $"Without sizes L averaged {plainL:0.0}, with {sizedL:0.0}: the size input did not lower it.");
        Assert.True(sizedTask > plainTask, $"Task size with sizes {sizedTask:0} B did not grow past {plainTask:0} B.");
        Assert.Contains(withSizes.Decisions, d => d.Decision.Reason.Contains("recent documents up to", StringComparison.Ordinal));
    }

    private (double MeanL, double MeanTaskBytes) LastFifth(SimulationResult result, string label)
    {
        var end = result.Elapsed;
        var fifth = end / 5;
        var meanL = result.MeanConcurrency(end - fifth, end);
        var task = result.MeanTaskBytes(end - fifth, end);
        var summary = result.Summary("growing, 1 MiB budget");
        output.WriteLine(FormattableString.Invariant(
            $"{label}: {summary}; L first/last fifth {result.MeanConcurrency(TimeSpan.Zero, fifth):0.0}/{meanL:0.0}; task first/last fifth {result.MeanTaskBytes(TimeSpan.Zero, fifth) / 1024:0}/{task / 1024:0} KiB"));
        return (meanL, task);
    }
}
