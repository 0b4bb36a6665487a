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
    public void Decide_GiantsCutSlowStartToTheCeiling_HoldsOnePlateauThereBeforeProbingDown()
    {
        // Every L delivers in proportion, so each doubling pays and nothing points below the ceiling.
        var driver = new ControllerDriver(new ControllerOptions { MaxConcurrency = 64 });
        while (driver.Tick(s => s with { BudgetBytes = 256 * MiB }).Concurrency < 16)
        {
        }

        // 2 x 256 MiB / 40 MiB: the ceiling of twelve cuts the doubling to 16 back to 12.
        var giants = driver.Run(TimeSpan.FromSeconds(25), s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 40 * MiB });

        Assert.Contains("recent documents up to 40 MiB", giants[0].Decision.Reason, StringComparison.Ordinal);
        var holds = giants.Where(d => d.Decision.Reason.StartsWith("hold: L=12 at limit 12, slow start still paying", StringComparison.Ordinal)).ToList();
        var hold = Assert.Single(holds);
        var firstProbeDown = giants.First(d => d.Decision.Concurrency < 12);
        var plateau = new ControllerOptions().PlateauTime;
        Assert.True(firstProbeDown.At - hold.At >= plateau, $"probed down at {firstProbeDown.At}, {firstProbeDown.At - hold.At} after the hold: '{firstProbeDown.Decision.Reason}'");
        Assert.True(firstProbeDown.At - hold.At < 2 * plateau, $"a second plateau: probed down only at {firstProbeDown.At}, hold at {hold.At}");
        Assert.StartsWith("cut: probing", firstProbeDown.Decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Decide_DoublingLandsOnTheLimitAndPays_HoldsOnePlateauThenProbesDown()
    {
        var driver = new ControllerDriver(new ControllerOptions { MaxConcurrency = 16 });

        var run = driver.Run(TimeSpan.FromSeconds(30), s => s with { BudgetBytes = 256 * MiB });

        // The doubling from 8 pays in full (every L delivers in proportion): the hold of a paying step.
        var reached = run.First(d => d.Decision.Reason.StartsWith("hold: +100% MB/s at L=16 over 8", StringComparison.Ordinal));
        Assert.EndsWith("at limit 16", reached.Decision.Reason, StringComparison.Ordinal);
        Assert.Equal(16, reached.Decision.Concurrency);
        var firstProbeDown = run.First(d => d.At > reached.At && d.Decision.Concurrency < 16);
        var plateau = new ControllerOptions().PlateauTime;
        Assert.True(firstProbeDown.At - reached.At < 2 * plateau,
            $"held at 16 from {reached.At} ('{reached.Decision.Reason}') to {firstProbeDown.At}: a second plateau");
        Assert.DoesNotContain(run, d => d.Decision.Reason.Contains("slow start still paying", StringComparison.Ordinal));
    }

    [Fact]
    public void Decide_CeilingCutsLDuringThePlateauAtTheLimit_HoldsTheRestOfThePlateauBeforeProbingDown()
    {
        var driver = new ControllerDriver(new ControllerOptions { MaxConcurrency = 16 });
        while (!driver.Tick(s => s with { BudgetBytes = 256 * MiB }).Reason.StartsWith("hold: +100% MB/s at L=16 over 8", StringComparison.Ordinal))
        {
        }
        var plateauEnds = driver.Now + new ControllerOptions().PlateauTime;
        driver.Run(TimeSpan.FromSeconds(3), s => s with { BudgetBytes = 256 * MiB });

        // 2 x 256 MiB / 40 MiB: the ceiling of twelve cuts L in the middle of the plateau.
        var giants = driver.Run(TimeSpan.FromSeconds(15), s => s with { BudgetBytes = 256 * MiB, LargestRecentDocumentBytes = 40 * MiB });

        Assert.Contains("recent documents up to 40 MiB", giants[0].Decision.Reason, StringComparison.Ordinal);
        var firstProbeDown = giants.First(d => d.Decision.Concurrency < 12);
        Assert.True(firstProbeDown.At >= plateauEnds, $"probed down at {firstProbeDown.At}, before the plateau's end at {plateauEnds}: '{firstProbeDown.Decision.Reason}'");
        Assert.StartsWith("cut: probing", firstProbeDown.Decision.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Decide_InitialLAtTheLimit_ProbesDownWithoutClaimingSlowStartPaid()
    {
        // The ceiling (2 x 64 MiB / 40 MiB = 3) is at the initial L before any step was measured.
        var driver = new ControllerDriver(new ControllerOptions { InitialConcurrency = 3 });

        var run = driver.Run(TimeSpan.FromSeconds(5), s => s with { BudgetBytes = 64 * MiB, LargestRecentDocumentBytes = 40 * MiB });

        Assert.DoesNotContain(run, d => d.Decision.Reason.Contains("slow start still paying", StringComparison.Ordinal));
        Assert.Contains(run, d => d.Decision.Concurrency < 3 && d.Decision.Reason.StartsWith("cut: probing", StringComparison.Ordinal));
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
