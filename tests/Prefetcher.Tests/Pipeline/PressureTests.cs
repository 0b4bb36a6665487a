using System.Diagnostics;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>The pressure snapshot of the adaptive prefetcher while it runs: decisions, rates, foreground signal.</summary>
[Collection(TimingSensitive.Name)]
public sealed class PressureTests
{
    [Fact]
    public async Task Pressure_WhileRunning_ShowsDecisionsRatesAndForegroundLatency()
    {
        var foreground = new LatencyHistogram();
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(3000, 8 * TestCollections.KiB));
        var options = new PrefetchOptions { ForegroundLatency = foreground, BudgetBytes = 8 * TestCollections.MiB };
        await using var prefetcher = Strategies.StartAdaptive(Strategies.OnModelledDisk(source), options);
        var first = prefetcher.Pressure;

        // A consumer slow enough (about 24 MB/s) for the run to last several ticks, and foreground Gets of
        // ~5 ms, enough of them (ten per batch) for the signal's minimum sample count.
        var seen = new List<PrefetchPressure>();
        await foreach (var batch in prefetcher.ReadAllAsync(64, TestCollections.MiB).WithCancellation(CancellationToken.None))
        {
            for (var i = 0; i < 10; i++)
            {
                foreground.Record(TimeSpan.FromMilliseconds(5));
            }

            await Task.Delay(20);
            seen.Add(prefetcher.Pressure);
        }

        var running = seen.Where(p => p.State is PrefetchState.Planning or PrefetchState.Running).ToList();

        Assert.Equal(PrefetchState.Planning, first.State);
        Assert.Same(prefetcher.Pressure, prefetcher.Pressure);
        var late = running[^1];
        Assert.True(running.Count >= 10, $"Only {running.Count} batches were taken while running.");
        Assert.NotNull(late.LastDecision);
        Assert.NotNull(late.LastDecisionReason);
        Assert.Equal("start", late.RecentDecisions[0].Kind);
        Assert.Contains(running, p => p.MegabytesPerSecondLast10Seconds > 0 && p.DocumentsPerSecondLastSecond > 0);
        Assert.Contains(running, p => p.ForegroundP99 >= TimeSpan.FromMilliseconds(4));
        Assert.All(running, p => Assert.InRange(p.InFlightBytes + p.BufferedBytes, 0, p.BudgetBytes));
        Assert.All(running, p => Assert.InRange(p.ConcurrencyLimit, 1, options.Controller.MaxConcurrency));
        Assert.Contains(seen, p => p.PlanComplete && p.Eta is not null);
        Assert.Equal(PrefetchState.Completed, prefetcher.Pressure.State);
    }

    [Fact]
    public async Task Pressure_BudgetFarBelowTheCollection_CountsTheTotalAndGivesAnEtaLongBeforeThePlanEnds()
    {
        // 24 MiB under a 1 MiB budget: the lazy plan stays about a budget ahead of what is taken, so
        // its own totals are a small part of the collection until near the end.
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(3000, 8 * TestCollections.KiB));
        var options = new PrefetchOptions { BudgetBytes = TestCollections.MiB, TickInterval = TimeSpan.FromMilliseconds(50) };
        await using var prefetcher = Strategies.StartAdaptive(source, options);

        var early = new List<PrefetchPressure>();
        var hangGuard = Stopwatch.StartNew();
        while (early.Count == 0 || early[^1].Eta is null)
        {
            Assert.True(hangGuard.Elapsed < TimeSpan.FromSeconds(60), "no ETA within 60 s of taking a batch every 20 ms");
            Assert.NotNull(await prefetcher.TakeAsync(16, TestCollections.MiB));
            await Task.Delay(20);
            early.Add(prefetcher.Pressure);
        }

        var counted = early[^1];
        Assert.False(counted.PlanComplete, $"the plan ended after {counted.DocumentsDone} documents taken; the test needs it to run on");
        Assert.True(counted.DocumentsPlanned < source.Count / 2, $"{counted.DocumentsPlanned} planned");
        Assert.Equal(source.Count, counted.DocumentsTotal);
        Assert.Equal(source.TotalBytes, counted.BytesTotal);
        Assert.Equal(source.Count - counted.DocumentsDone, counted.DocumentsRemaining);
        await Strategies.DrainWithPatienceAsync(prefetcher, maxDocuments: 256);
        Assert.Equal(source.Count, prefetcher.Pressure.DocumentsTotal);
        Assert.Equal(source.Count, prefetcher.Pressure.DocumentsPlanned);
    }

    [Fact]
    public async Task Tick_FirstTickInterval_TheControllerDecidesLongBeforeTheFirstRegularTick()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(400, 64 * TestCollections.KiB)) { ReadDelay = TimeSpan.FromMilliseconds(50) };
        // The longest regular interval there is: its first tick comes at 9 s at the earliest (jitter ±10%),
        // so a decision well before that came from the first tick, however loaded the machine.
        var options = new PrefetchOptions { TickInterval = TimeSpan.FromSeconds(10), FirstTickInterval = TimeSpan.FromMilliseconds(100) };
        var clock = Stopwatch.StartNew();
        await using var prefetcher = Strategies.StartAdaptive(source, options);

        while (prefetcher.Pressure.LastDecision is null)
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), "no decision within 30 s");
            await Task.Delay(10);
        }

        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(7), $"the first decision came at {clock.Elapsed.TotalSeconds:0.00} s");
        Assert.StartsWith("start", prefetcher.Pressure.LastDecisionReason);
    }

    [Fact]
    public async Task Pressure_LongRun_KeepsOneHistoryPointPerSecond()
    {
        // 30 reads of one 64 KiB document each, one at a time, 50 ms apiece: about 1.5 s.
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(30, 64 * TestCollections.KiB)) { ReadDelay = TimeSpan.FromMilliseconds(50) };
        var controller = new ControllerOptions
        {
            InitialConcurrency = 1,
            MaxConcurrency = 1,
            MinTaskBytes = 64 * TestCollections.KiB,
            InitialTaskBytes = 64 * TestCollections.KiB,
            MaxTaskBytes = 64 * TestCollections.KiB,
        };
        var options = new PrefetchOptions { Controller = controller, TickInterval = TimeSpan.FromMilliseconds(50) };
        await using var prefetcher = Strategies.StartAdaptive(source, options);

        await Strategies.DrainWithPatienceAsync(prefetcher, maxDocuments: 1);

        // One point per whole second of the run: about 1.5 s makes 2, but a busy machine stretches the
        // run, so the upper bound comes from the run's own elapsed time (a point per tick would be ~30).
        var pressure = prefetcher.Pressure;
        var history = pressure.History;
        Assert.InRange(history.Length, 2, (int)pressure.Elapsed.TotalSeconds + 1);
        Assert.Equal(history.Select(p => (long)p.Elapsed.TotalSeconds).Distinct().Count(), history.Length);
        Assert.True(history.Zip(history.Skip(1)).All(pair => pair.First.Elapsed < pair.Second.Elapsed));
    }
}
