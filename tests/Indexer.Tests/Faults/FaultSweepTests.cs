using System.Globalization;

using Indexing.Indexer.Tests.Index;

using Xunit.Abstractions;

namespace Indexing.Indexer.Tests.Faults;

// The fault sweep, in the style of RocksDB's db_crash_test and SQLite's I/O-error tests: the
// scenario of FaultSweep.cs runs once without faults to count its file operations, then once per
// chosen point N with the Nth operation failing, and every point must lose nothing.
//
// At CI size it runs a seeded sample of SampledPoints points: every operation but writes (creates,
// fsyncs, renames, deletes, the catalog's steps) while they fit, the rest writes (far more numerous).
// With INDEXING_FAULT_SWEEP=full it runs every non-write point and a wider sample of writes, each
// alone and followed by a second fault on the next operation (benchmarks/results/fault-sweep.md has
// what both found and how long they took).
public sealed class FaultSweepTests(ITestOutputHelper output)
{
    private const int Documents = 60;
    private const int Writes = 40;
    private const int SampledPoints = 200;
    private const int Seed = 2026;

    [Fact]
    [Trait("Category", "FaultSweep")]
    public async Task Sweep_EveryChosenFileOperationFails_NothingIsLostOrClaimedWithoutBeingHeld()
    {
        var full = Environment.GetEnvironmentVariable("INDEXING_FAULT_SWEEP") == "full";
        var dry = await FaultSweep.RunAsync(Documents, Writes);
        Assert.Empty(dry.Problems);
        Assert.Equal(0, dry.Faults);
        var counted = dry.Operations;
        var points = ChoosePoints(counted, full);
        output.WriteLine($"dry run: {counted.Operations:N0} file operations ({string.Join(", ", counted.ByKind.OrderBy(k => k.Key).Select(k => $"{k.Value:N0} {k.Key.ToString().ToLowerInvariant()}"))})");

        var runs = new List<(long[] FailAt, FaultSweep.Outcome Outcome)>();
        var faults = points.Select(n => new[] { n }).ToList();
        if (full)
        {
            faults.AddRange(points.Select(n => new[] { n, n + 1 }));
        }

        // Two points at a time: most of a run waits on its timers.
        using var slots = new SemaphoreSlim(2);
        var tasks = faults.Select(async failAt =>
        {
            await slots.WaitAsync();
            try
            {
                var outcome = await FaultSweep.RunAsync(Documents, Writes, failAt);
                lock (runs)
                {
                    runs.Add((failAt, outcome));
                }
            }
            finally
            {
                slots.Release();
            }
        }).ToList();
        await Task.WhenAll(tasks);

        var failed = runs.Where(r => r.Outcome.Problems.Count > 0).OrderBy(r => r.FailAt[0]).ToList();
        var fired = runs.Count(r => r.Outcome.Faults > 0);
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"fault sweep: {runs.Count} points ({(full ? "full" : "CI sample")}), {fired} with a fault that fired, {failed.Count} failed"));
        foreach (var (failAt, outcome) in failed)
        {
            output.WriteLine($"  fail at {string.Join("+", failAt)} ({Kind(counted, failAt[0])}): {string.Join(" | ", outcome.Problems)}");
        }

        Assert.True(points.Count >= Math.Min(SampledPoints, counted.Operations), $"only {points.Count} points chosen of {counted.Operations} operations");
        Assert.True(fired >= runs.Count / 2, $"only {fired} of {runs.Count} points had their fault fire: the scenario's operations moved");
        Assert.Empty(failed);
    }

    // Every non-write operation (all of them for the full sweep; while they fit in the sample
    // otherwise), then writes drawn with a fixed seed.
    private static List<long> ChoosePoints(FaultPlan.Counts dry, bool full)
    {
        var random = new Random(Seed);
        var nonWrites = dry.NonWrites.Select(o => o.Number).ToList();
        var chosen = new SortedSet<long>(full ? nonWrites : nonWrites.OrderBy(_ => random.Next()).Take(SampledPoints * 3 / 5));
        var target = full ? chosen.Count + 4 * SampledPoints : SampledPoints;
        while (chosen.Count < Math.Min(target, dry.Operations))
        {
            chosen.Add(random.NextInt64(1, dry.Operations + 1));
        }

        return [.. chosen];
    }

    private static string Kind(FaultPlan.Counts dry, long number) =>
        dry.NonWrites.FirstOrDefault(o => o.Number == number) is { File: not null } op ? $"{op.Operation.ToString().ToLowerInvariant()} {op.File}" : "a write";
}
