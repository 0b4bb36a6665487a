using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// A prefetch that follows another on the same modelled disk, in virtual time: it starts where the
/// first settled (what its device remembers) instead of probing up from L=2.
/// </summary>
public sealed class RememberedStartTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData(16)]
    [InlineData(4)]
    public void SecondPrefetch_OnTheSameDevice_StartsAtTheRememberedKnee_AndStepsFromThere(int usefulQueueDepth)
    {
        var setup = new SimulationSetup { Disk = new NetworkDiskModelOptions { UsefulQueueDepth = usefulQueueDepth }, Duration = TimeSpan.FromSeconds(30) };
        var first = PrefetchSimulation.Run(setup);
        var remembered = first.Settled;
        Assert.NotNull(remembered);

        var second = PrefetchSimulation.Run(setup with { Remembered = remembered, Seed = 2 });
        var fresh = PrefetchSimulation.Run(setup with { Seed = 2 });

        var start = second.Decisions[0].Decision;
        Assert.Equal((ControllerDecisionKind.Start, remembered.Concurrency), (start.Kind, start.Concurrency));
        Assert.Equal(remembered.Concurrency, second.ConcurrencySteps[0].Concurrency);
        // Fine steps from the knee, no doubling past it.
        var fineStepUp = Math.Max(remembered.Concurrency + 1, (int)Math.Round(remembered.Concurrency * HillClimber.FineStepFactor, MidpointRounding.AwayFromZero));
        Assert.InRange(second.MaxConcurrency(TimeSpan.Zero, TimeSpan.FromSeconds(3)), 1, fineStepUp);

        var final = first.BytesPerSecondBetween(TimeSpan.FromSeconds(10), TimeSpan.FromSeconds(30));
        output.WriteLine(FormattableString.Invariant(
            $"depth {usefulQueueDepth}: remembered {remembered}; final rate {final / 1e6:0} MB/s; 80% of it reached at {At(fresh.TimeToReach(0.8, final))} from L=2, {At(second.TimeToReach(0.8, final))} from the remembered L; first 3 s: {fresh.BytesPerSecondBetween(TimeSpan.Zero, TimeSpan.FromSeconds(3)) / 1e6:0} vs {second.BytesPerSecondBetween(TimeSpan.Zero, TimeSpan.FromSeconds(3)) / 1e6:0} MB/s"));
        foreach (var (at, decision) in second.Decisions.Where(d => d.Decision.Kind != ControllerDecisionKind.Hold).Take(8))
        {
            output.WriteLine(FormattableString.Invariant($"{at.TotalSeconds:0.00} L={decision.Concurrency} {decision.Reason}"));
        }
    }

    private static string At(TimeSpan? at) => at is { } time ? FormattableString.Invariant($"{time.TotalSeconds:0.00} s") : "never";
}
