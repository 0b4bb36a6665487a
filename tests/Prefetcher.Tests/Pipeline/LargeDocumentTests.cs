namespace Indexing.Prefetcher.Tests;

/// <summary>A large document is read apart, never holds small ones back, and fits even when bigger than the budget.</summary>
[Collection(TimingSensitive.Name)]
public sealed class LargeDocumentTests
{
    private const int SmallBefore = 200;
    private const int SmallAfter = 20_000;

    // L fixed at 2 (at the limit the climb could probe down to 1, where a held giant blocks every read).
    private static readonly PrefetchOptions HeldAtTwo = new() { Controller = new ControllerOptions { InitialConcurrency = 2, MaxConcurrency = 2, FixedConcurrency = 2 } };

    [Fact]
    public async Task ReadAll_GiantBeingRead_SmallDocumentsPlannedAfterItArriveBeforeIt()
    {
        // 2 KiB documents around one 50 MB document at docs/000200, whose read is held until the
        // consumer has had a tenth of the small documents planned after it. Ready reads go out in
        // key order, but a take never waits for a read still running: if it did, the giant would
        // never be let finish and the run would fail. Judged by a gate, not by time: how soon the
        // thread pool wakes the consumer while a real read runs made a timed version flaky.
        var sizes = Enumerable.Repeat(2 * TestCollections.KiB, SmallBefore + 1 + SmallAfter).ToArray();
        sizes[SmallBefore] = 50_000_000;
        var giantId = TestCollections.Id(SmallBefore);
        using var giantMayFinish = new ManualResetEventSlim();
        var source = new HoldTaskSource(new InMemoryReadSourceDouble(TestCollections.FromSizes(sizes)), giantMayFinish, task => task.IsLargeDocument);
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());

        var received = await ReceiveLettingHeldReadsFinishAsync(prefetcher, giantId, giantMayFinish);

        Assert.Equal(sizes.Length, received.Count);
        var giantAt = received.IndexOf(giantId);
        Assert.True(giantAt >= 0, "The giant was delivered.");
        var overtaking = received.Take(giantAt).Count(id => string.CompareOrdinal(id, giantId) > 0);
        Assert.True(overtaking >= SmallAfter / 10, $"Only {overtaking} small documents planned after the giant were delivered before it.");
    }

    [Fact]
    public async Task ReadAll_TwoGiantsBeingReadAtLTwo_SmallDocumentsPlannedAfterBothArriveBeforeEither()
    {
        // L fixed at 2, two 20 MB documents 200 small ones apart, both reads held until the consumer
        // has had a tenth of the small documents planned after the second. In key order the second
        // giant took the second reader and nothing after it was read: the run waited for ever.
        // Long reads take half of L while small tasks are there, so the second giant waits and
        // the small documents after it pass it.
        var sizes = Enumerable.Repeat(2 * TestCollections.KiB, SmallBefore + 1 + SmallBefore + 1 + SmallAfter).ToArray();
        var firstGiant = SmallBefore;
        var secondGiant = SmallBefore + 1 + SmallBefore;
        sizes[firstGiant] = 20_000_000;
        sizes[secondGiant] = 20_000_000;
        var secondGiantId = TestCollections.Id(secondGiant);
        using var giantsMayFinish = new ManualResetEventSlim();
        var source = new HoldTaskSource(new InMemoryReadSourceDouble(TestCollections.FromSizes(sizes)), giantsMayFinish, task => task.IsLargeDocument);
        await using var prefetcher = Strategies.StartAdaptive(source, HeldAtTwo);

        var received = await ReceiveLettingHeldReadsFinishAsync(prefetcher, secondGiantId, giantsMayFinish);

        Assert.Equal(sizes.Length, received.Count);
        Assert.Equal(sizes.Length, received.Distinct().Count());
        var firstGiantAt = received.IndexOf(TestCollections.Id(firstGiant));
        var secondGiantAt = received.IndexOf(secondGiantId);
        Assert.True(firstGiantAt >= 0 && secondGiantAt >= 0, "Both giants were delivered.");
        var overtaking = received.Take(Math.Min(firstGiantAt, secondGiantAt)).Count(id => string.CompareOrdinal(id, secondGiantId) > 0);
        Assert.True(overtaking >= SmallAfter / 10, $"Only {overtaking} small documents planned after the second giant were delivered before the giants.");
        Assert.Equal(0, prefetcher.LongReadsRunning);
    }

    [Fact]
    public async Task Dispose_GiantsHeldAndQueued_EveryLongReadStartedHasEnded()
    {
        // Giants held in readers, the rest waiting for a lane: disposing cancels the held reads
        // (their lanes are given back on the failure path) and drops the waiting ones, never started.
        // Held: one at first; once the plan has ended (2,000 small documents are cut in moments) the
        // waiting giants go whatever the lanes, and the second slot holds one too. So the wait is for
        // at least one: waiting for exactly one missed that moment when the test thread ran late, and
        // timed out with two held.
        var sizes = Enumerable.Repeat(2 * TestCollections.KiB, 2_000).ToArray();
        foreach (var at in new[] { 100, 300, 500, 700 })
        {
            sizes[at] = 20_000_000;
        }

        using var neverFinish = new ManualResetEventSlim();
        var source = new HoldTaskSource(new InMemoryReadSourceDouble(TestCollections.FromSizes(sizes)), neverFinish, task => task.IsLargeDocument);
        var prefetcher = Strategies.StartAdaptive(source, HeldAtTwo);
        await Strategies.EventuallyAsync(() => prefetcher.LongReadsRunning >= 1, "a giant's read started");

        await prefetcher.DisposeAsync();

        Assert.Equal(PrefetchState.Cancelled, prefetcher.Pressure.State);
        Assert.Equal(0, prefetcher.LongReadsRunning);
    }

    [Fact]
    public async Task ReadAll_GiantReadFails_EveryLongReadStartedHasEnded()
    {
        var sizes = Enumerable.Repeat(2 * TestCollections.KiB, 2_000).ToArray();
        sizes[100] = 20_000_000;
        sizes[300] = 20_000_000;
        // Every read of a large document fails, as a damaged blob file would.
        var source = new InMemoryReadSourceDouble(TestCollections.FromSizes(sizes))
        {
            FailWhen = task => task.IsLargeDocument ? new IOException($"the blob holding {task.FirstId} is damaged") : null,
        };
        await using var prefetcher = Strategies.StartAdaptive(source, HeldAtTwo);

        var error = await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.Contains(TestCollections.Id(100), error.Message);
        await prefetcher.DisposeAsync();
        Assert.Equal(0, prefetcher.LongReadsRunning);
    }

    // Every id received, in order; the held reads may finish once a tenth of the small documents
    // planned after afterId have been received.
    private static Task<List<string>> ReceiveLettingHeldReadsFinishAsync(PrefetchPipeline prefetcher, string afterId, ManualResetEventSlim mayFinish) =>
        Task.Run(async () =>
        {
            var ids = new List<string>();
            var after = 0;
            await foreach (var batch in prefetcher.ReadAllAsync(512, 4 * TestCollections.MiB).ConfigureAwait(false))
            {
                ids.AddRange(batch.Documents.Select(d => d.Id));
                after += batch.Documents.Count(d => string.CompareOrdinal(d.Id, afterId) > 0);
                if (after >= SmallAfter / 10)
                {
                    mayFinish.Set();
                }
            }

            return ids;
        }).WaitAsync(Strategies.Patience);

    [Fact]
    public async Task ReadAll_DocumentBiggerThanBudget_IsDeliveredAlone()
    {
        const long Budget = TestCollections.MiB;
        var sizes = Enumerable.Repeat(10 * TestCollections.KiB, 101).ToArray();
        sizes[50] = 3 * TestCollections.MiB;
        var source = new InMemoryReadSourceDouble(TestCollections.FromSizes(sizes));
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions { BudgetBytes = Budget });

        var batches = new List<PrefetchBatch>();
        await foreach (var batch in prefetcher.ReadAllAsync(1000, 8 * TestCollections.MiB).WithCancellation(CancellationToken.None))
        {
            batches.Add(batch);
        }

        Assert.Equal(101, batches.Sum(b => b.Count));
        var withGiant = Assert.Single(batches, b => b.Documents.Any(d => d.Id == TestCollections.Id(50)));
        Assert.Equal(1, withGiant.Count);
        var pressure = prefetcher.Pressure;
        Assert.Equal(3 * TestCollections.MiB, pressure.LargestOversizedAdmissionBytes);
        Assert.InRange(pressure.HighWaterMarkBytes, 1, Budget);
    }
}
