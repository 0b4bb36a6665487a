using static Indexing.Prefetcher.ControllerDecisionKind;

namespace Indexing.Prefetcher.Tests;

public sealed class DecisionHistoryTests
{
    private static TimeSpan Seconds(double value) => TimeSpan.FromSeconds(value);

    [Fact]
    public void Remember_SteadyHoldsWithOneCause_AreKeptOnce()
    {
        var history = new DecisionHistory();
        history.Remember(Seconds(0), new ControllerStep(2, Start, "start: L=2", DecisionCause.Start), 2);
        for (var i = 1; i < 40; i++)
        {
            history.Remember(Seconds(i), new ControllerStep(2, Hold, "hold: memory high", DecisionCause.Memory), 2);
        }

        Assert.Equal([(Start.Name(), "start: L=2"), (Hold.Name(), "hold: memory high")], history.Entries.Select(e => (e.Kind, e.Reason)));
    }

    [Fact]
    public void Remember_MeasuringHolds_AreNotKept()
    {
        var history = new DecisionHistory();

        history.Remember(Seconds(1), new ControllerStep(2, Hold, "hold: measuring L=2", DecisionCause.Measure), 2);

        Assert.Empty(history.Entries);
    }

    [Fact]
    public void Remember_ManyChanges_KeepsTheLast50OldestFirst()
    {
        var history = new DecisionHistory();
        for (var i = 0; i < 120; i++)
        {
            history.Remember(Seconds(i), new ControllerStep(2 + (i % 2), i % 2 == 0 ? Cut : Grow, $"step {i}", DecisionCause.Probe), 2 + ((i + 1) % 2));
        }

        var entries = history.Entries;
        Assert.Equal(DecisionHistory.Capacity, entries.Length);
        Assert.Equal((Seconds(70), "step 70"), (entries[0].Elapsed, entries[0].Reason));
        Assert.Equal((Seconds(119), "step 119"), (entries[^1].Elapsed, entries[^1].Reason));
    }

    [Fact]
    public void Entries_Snapshot_DoesNotChangeWithLaterDecisions()
    {
        var history = new DecisionHistory();
        history.Remember(Seconds(0), new ControllerStep(2, Start, "start: L=2", DecisionCause.Start), 2);
        var snapshot = history.Entries;

        history.Remember(Seconds(1), new ControllerStep(4, Grow, "grow", DecisionCause.Probe), 2);

        Assert.Single(snapshot);
        Assert.Equal(2, history.Entries.Length);
    }
}
