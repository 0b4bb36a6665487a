using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The hand-out watermark a resumable rebuild checkpoints: every document up to it was handed out,
/// it never passes a document still unread however reads complete, and a run can start after it.
/// </summary>
public sealed class WatermarkTests
{
    [Fact]
    public void HandedOut_OutOfOrder_WatermarkIsTheEndOfTheCompletePrefix()
    {
        var watermark = new HandOutWatermark(startAfterId: null);

        watermark.HandedOut(Task(2, "c"));
        watermark.HandedOut(Task(1, "b"));
        Assert.Null(watermark.Through);

        watermark.HandedOut(Task(0, "a"));
        Assert.Equal("c", watermark.Through);

        watermark.HandedOut(Task(4, "e"));
        Assert.Equal("c", watermark.Through);
        watermark.HandedOut(Task(3, "d"));
        Assert.Equal("e", watermark.Through);
    }

    [Fact]
    public void HandedOut_SameTaskTwice_Throws()
    {
        var watermark = new HandOutWatermark("start");
        Assert.Equal("start", watermark.Through);
        watermark.HandedOut(Task(0, "a"));
        watermark.HandedOut(Task(2, "c"));

        Assert.Throws<InvalidOperationException>(() => watermark.HandedOut(Task(0, "a")));
        Assert.Throws<InvalidOperationException>(() => watermark.HandedOut(Task(2, "c")));
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task ReadAll_EveryBatch_WatermarkCoversOnlyDocumentsAlreadyHandedOut(string strategy)
    {
        var documents = TestCollections.Shaped(SizeShapes.RareGiants, 3000);
        var source = new InMemoryReadSourceDouble(documents);
        await using var prefetcher = Strategies.Start(strategy, Strategies.OnModelledDisk(source), new PrefetchOptions { BudgetBytes = 16 * TestCollections.MiB });

        var received = new HashSet<string>(StringComparer.Ordinal);
        var index = 0;
        string? previous = null;
        using var patience = new CancellationTokenSource(Strategies.Patience);
        await foreach (var batch in prefetcher.ReadAllAsync(200, TestCollections.MiB).WithCancellation(patience.Token))
        {
            received.UnionWith(batch.Documents.Select(d => d.Id));
            Assert.Equal(batch.HandedOutThrough, prefetcher.HandedOutThrough);
            if (batch.HandedOutThrough is { } through)
            {
                Assert.True(previous is null || DocumentIds.CompareKeyOrder(previous, through) <= 0, $"The watermark went back from '{previous}' to '{through}'.");
                for (; index < documents.Count && DocumentIds.CompareKeyOrder(documents[index].Id, through) <= 0; index++)
                {
                    Assert.True(received.Contains(documents[index].Id), $"The watermark '{through}' passed '{documents[index].Id}', which was not handed out.");
                }

                previous = through;
            }
        }

        Assert.Equal(documents[^1].Id, prefetcher.HandedOutThrough);
    }

    [Fact]
    public async Task Adaptive_FirstTaskStillReading_WatermarkStaysBeforeItWhileLaterDocumentsAreHandedOut()
    {
        var documents = TestCollections.Uniform(4000, 16 * TestCollections.KiB);
        using var firstTaskMayFinish = new ManualResetEventSlim();
        var source = new HoldTaskSource(new InMemoryReadSourceDouble(documents), firstTaskMayFinish);
        var options = new PrefetchOptions { Controller = new ControllerOptions { InitialConcurrency = 4, MaxConcurrency = 8 } };
        await using var prefetcher = Strategies.StartAdaptive(source, options);

        var early = await prefetcher.TakeAsync(100, TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);

        Assert.NotNull(early);
        Assert.DoesNotContain(early.Documents, d => d.Id == documents[0].Id);
        Assert.Null(early.HandedOutThrough);
        Assert.Null(prefetcher.HandedOutThrough);

        firstTaskMayFinish.Set();
        var rest = await Strategies.DrainWithPatienceAsync(prefetcher);
        Assert.Equal(documents.Count, early.Count + rest.Count);
        Assert.Equal(documents[^1].Id, prefetcher.HandedOutThrough);
    }

    [Fact]
    public async Task Adaptive_FirstTaskCompletesAfterTheBudgetFilled_GoesOutFirstAndTheWatermarkJumpsPastTheBufferedReads()
    {
        // 64 MiB under an 8 MiB budget: while the first task is held, later reads fill the budget and
        // wait to be taken. Handed out in completion order, the first task would go out only after all
        // of them, and the watermark (what a resumed build skips) would stay before it meanwhile.
        var documents = TestCollections.Uniform(4000, 16 * TestCollections.KiB);
        using var firstTaskMayFinish = new ManualResetEventSlim();
        var source = new HoldTaskSource(new InMemoryReadSourceDouble(documents), firstTaskMayFinish);
        var options = new PrefetchOptions
        {
            BudgetBytes = 8 * TestCollections.MiB,
            TickInterval = TimeSpan.FromMilliseconds(20),
            Controller = new ControllerOptions { InitialConcurrency = 4, MaxConcurrency = 8 },
        };
        await using var prefetcher = Strategies.StartAdaptive(source, options);
        await Strategies.EventuallyAsync(
            () => prefetcher.Admission.Snapshot() is { WaitingFor: AdmissionStage.Budget, Running: 1 } && prefetcher.Pressure.QueuedBatches >= 3,
            "later reads filling the budget while the first task is held",
            () => $"{prefetcher.Admission.Snapshot()}, {prefetcher.Pressure.QueuedBatches} queued; decisions: {string.Join("; ", prefetcher.Pressure.RecentDecisions.Select(d => d.Reason))}");
        // The published count is a tick old, and a read leaves the admission just before it joins the
        // queue: a snapshot published a few ticks after the budget filled counts every read that ended.
        // Nothing changes meanwhile: the budget is full and nothing is taken.
        var filledAt = prefetcher.Pressure.Elapsed;
        await Strategies.EventuallyAsync(() => prefetcher.Pressure.Elapsed > filledAt + (5 * options.TickInterval), "five ticks more");
        Assert.Equal(1, prefetcher.Admission.Snapshot().Running);
        var queuedBefore = prefetcher.Pressure.QueuedBatches;

        firstTaskMayFinish.Set();
        await Strategies.EventuallyAsync(
            () => prefetcher.Pressure.QueuedBatches > queuedBefore,
            "the first task's read published",
            () => $"{prefetcher.Admission.Snapshot()}, {prefetcher.Pressure.QueuedBatches} queued, {queuedBefore} before");
        var next = await prefetcher.TakeAsync(documents.Count, 64 * TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);

        // Every read buffered, the first one first: a contiguous prefix, so the watermark is its end.
        Assert.NotNull(next);
        Assert.Equal(documents.Take(next.Count).Select(d => d.Id), next.Documents.Select(d => d.Id));
        Assert.Equal(next.Documents[^1].Id, next.HandedOutThrough);
        var rest = await Strategies.DrainWithPatienceAsync(prefetcher);
        Assert.Equal(documents.Count, next.Count + rest.Count);
        Assert.Equal(documents[^1].Id, prefetcher.HandedOutThrough);
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task Start_AfterAKey_DeliversOnlyLaterDocumentsAndStartsTheWatermarkThere(string strategy)
    {
        var documents = TestCollections.Uniform(1000, 4 * TestCollections.KiB);
        var resumeAfter = documents[599].Id;
        var source = new InMemoryReadSourceDouble(documents) { StartAfterId = resumeAfter };
        await using var prefetcher = Strategies.Start(strategy, source);
        Assert.Equal(resumeAfter, prefetcher.HandedOutThrough);

        var received = await Strategies.DrainWithPatienceAsync(prefetcher);

        Assert.Equal(documents.Skip(600).Select(d => d.Id), received.Select(d => d.Id).Order(Comparer<string>.Create(DocumentIds.CompareKeyOrder)));
        Assert.Equal(documents[^1].Id, prefetcher.HandedOutThrough);
    }

    private static ReadTask Task(long sequence, string lastId) =>
        new(sequence, lastId, lastId, 1, 1, IsLargeDocument: false, TargetBytes: 1, [lastId], [sequence + 1]);
}
