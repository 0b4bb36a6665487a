namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Recent document sizes are a controller input: L readers each holding the largest recent document
/// must fit twice the budget (the default LargeDocumentBudgetFraction of 2).
/// </summary>
public sealed class SizeCeilingTests
{
    private const long MiB = 1024 * 1024;

    [Fact]
    public void Decide_GiantsArrive_CutsLToBudgetOverLargestAndSaysWhy()
    {
        var driver = new ControllerDriver(new ControllerOptions { InitialConcurrency = 20 });
        driver.Tick(s => s with { BudgetBytes = 256 * MiB });

        // 2 x 256 MiB / 40 MiB = 12.8: twelve readers.
        var decision = driver.Tick(s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 40 * MiB });

        Assert.Equal(12, decision.Concurrency);
        Assert.Equal(ControllerDecisionKind.Cut, decision.Kind);
        Assert.Contains("recent documents up to 40 MiB", decision.Reason, StringComparison.Ordinal);
        Assert.Contains("L=12", decision.Reason, StringComparison.Ordinal);

        // While giants keep arriving, growth stops at the ceiling.
        var held = driver.Run(TimeSpan.FromSeconds(20), s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 40 * MiB });
        Assert.All(held, d => Assert.True(d.Decision.Concurrency <= 12, $"L={d.Decision.Concurrency} above the size ceiling: {d.Decision.Reason}"));
    }

    [Fact]
    public void Decide_GiantsCutSlowStartToTheCeiling_HoldsThereInsteadOfProbingDown()
    {
        // Every L delivers in proportion, so each doubling pays and nothing points below the ceiling.
        var driver = new ControllerDriver(new ControllerOptions { MaxConcurrency = 64 });
        while (driver.Tick(s => s with { BudgetBytes = 256 * MiB }).Concurrency < 16)
        {
        }

        // 2 x 256 MiB / 40 MiB: the ceiling of twelve cuts the doubling to 16.
        var giants = driver.Run(TimeSpan.FromSeconds(8), s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 40 * MiB });

        Assert.Contains("recent documents up to 40 MiB", giants[0].Decision.Reason, StringComparison.Ordinal);
        Assert.All(giants, d => Assert.True(d.Decision.Concurrency == 12, $"{d.At}: L={d.Decision.Concurrency} '{d.Decision.Reason}'"));
        Assert.Contains(giants, d => d.Decision.Reason.StartsWith("hold: L=12 at limit 12, slow start still paying", StringComparison.Ordinal));
    }

    [Fact]
    public void Decide_GiantsGone_ClimbsAgainPastTheOldCeiling()
    {
        var driver = new ControllerDriver(new ControllerOptions { InitialConcurrency = 20 });
        driver.Run(TimeSpan.FromSeconds(5), s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 40 * MiB });
        Assert.Equal(12, driver.Controller.Concurrency);

        var after = driver.Run(TimeSpan.FromSeconds(30), s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 64 * 1024 });

        Assert.Contains(after, d => d.Decision.Concurrency > 12);
    }

    [Fact]
    public void Decide_SmallDocumentsOrNoSizeYet_LeaveTheConfiguredCeiling()
    {
        var driver = new ControllerDriver(new ControllerOptions { InitialConcurrency = 40 });

        Assert.Equal(40, driver.Tick(s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 0 }).Concurrency);
        Assert.Equal(40, driver.Tick(s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 100 * 1024 }).Concurrency);

        // A document larger than twice the whole budget still leaves one reader.
        Assert.Equal(1, driver.Tick(s => s with { BudgetBytes = 16 * MiB, LargestRecentDocumentBytes = 40 * MiB }).Concurrency);
    }

    [Fact]
    public void Decide_NegativeLargestDocument_ThrowsNamingTheSignal()
    {
        var driver = new ControllerDriver(new ControllerOptions());

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => driver.Tick(s => s with { LargestRecentDocumentBytes = -1 }));

        Assert.Contains("LargestRecentDocumentBytes", error.Message, StringComparison.Ordinal);
    }
}
