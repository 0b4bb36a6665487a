using Indexing.Datasets;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The engine's one byte budget (<see cref="SharedPrefetchBudget"/>) under several admissions and
/// pipelines: never exceeded, a waiter woken by another prefetch's release, first come first served,
/// the oversized rule, and a cancelled waiter leaving the line.
/// </summary>
public sealed class SharedPrefetchBudgetTests
{
    private const string Collection = DatasetSpec.DefaultCollection;

    [Fact]
    public async Task Admit_SharedBudgetFull_WaitsUntilAnotherPrefetchReleases()
    {
        var shared = new SharedPrefetchBudget(100);
        var first = Admission(shared);
        var second = Admission(shared);
        first.Admit(80, CancellationToken.None);

        // 30 fits the second prefetch's own budget of 1000, not the 20 left of the shared one.
        var waiter = AdmitOnThread(second, 30);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 1, "the second prefetch waits for the shared budget");
        first.ReadEnded(80, 80);
        Assert.False(waiter.IsCompleted);
        first.Release(50);
        await waiter.WaitAsync(Strategies.Patience);

        var snapshot = shared.Snapshot();
        Assert.Equal((60L, 80L, 0, 1L), (snapshot.HeldBytes, snapshot.HighWaterMarkBytes, snapshot.Waiting, snapshot.WaitedReservations));
        Assert.Equal((30L, 30L), (first.Snapshot().BufferedBytes, second.Snapshot().InFlightBytes));
    }

    [Fact]
    public async Task Admit_ReleaseFromAnotherThreadLater_ReturnsBytesToBothBudgets()
    {
        var shared = new SharedPrefetchBudget(100);
        var admission = Admission(shared);
        admission.Admit(100, CancellationToken.None);
        admission.ReadEnded(100, 100);

        // A consumer that keeps what it took until it is done releases it later, from its own thread.
        await Task.Run(() => admission.Release(100));

        Assert.Equal((0L, 0L), (shared.HeldBytes, admission.Snapshot().UsedBytes));
    }

    [Fact]
    public async Task Admit_FirstComeFirstServed_ASmallReadThatFitsWaitsBehindALargerOneThatCameFirst()
    {
        var shared = new SharedPrefetchBudget(100);
        var holder = Admission(shared);
        var large = Admission(shared);
        var small = Admission(shared);
        holder.Admit(60, CancellationToken.None);

        var largeRead = AdmitOnThread(large, 50);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 1, "the large read waits");
        var smallRead = AdmitOnThread(small, 30);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 2, "the small read queues behind it");
        Assert.False(smallRead.IsCompleted, "30 bytes fit beside the 60 held, but a larger read waited first");

        holder.ReadEnded(60, null);
        await Task.WhenAll(largeRead, smallRead).WaitAsync(Strategies.Patience);

        Assert.Equal((80L, 0), (shared.HeldBytes, shared.Snapshot().Waiting));
    }

    [Fact]
    public async Task Admit_LargerThanTheWholeSharedBudget_AdmittedAloneOnceNoPrefetchHoldsAnything_ThenHoldsItAlone()
    {
        var shared = new SharedPrefetchBudget(100);
        var other = Admission(shared);
        var giantReader = Admission(shared);
        other.Admit(10, CancellationToken.None);

        var giant = AdmitOnThread(giantReader, 250);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 1, "the giant waits for the other prefetch to hold nothing");
        other.ReadEnded(10, 10);
        Assert.False(giant.IsCompleted);
        other.Release(10);
        await giant.WaitAsync(Strategies.Patience);

        // Held alone: another prefetch's small read waits until the shared budget has room again.
        var small = AdmitOnThread(other, 10);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 1, "a small read waits while the giant holds more than the budget");
        giantReader.ReadEnded(250, 250);
        giantReader.Release(150);
        Assert.False(small.IsCompleted, "100 held of a 100-byte budget leaves no room");
        giantReader.Release(10);
        await small.WaitAsync(Strategies.Patience);

        var snapshot = shared.Snapshot();
        Assert.Equal((250L, 100L, 100L), (snapshot.LargestOversizedAdmission, snapshot.HighWaterMarkBytes, snapshot.HeldBytes));
    }

    [Fact]
    public async Task Admit_CancelledWhileFirstInTheSharedLine_LeavesIt_AndTheNextIsAdmitted()
    {
        var shared = new SharedPrefetchBudget(100);
        var holder = Admission(shared);
        var cancelled = Admission(shared);
        var next = Admission(shared);
        holder.Admit(60, CancellationToken.None);
        using var cancel = new CancellationTokenSource();

        var first = AdmitOnThread(cancelled, 50, cancel.Token);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 1, "the first waiter queues");
        var second = AdmitOnThread(next, 30);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 2, "the second queues behind it");
        cancel.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => first.WaitAsync(Strategies.Patience));
        await second.WaitAsync(Strategies.Patience);
        Assert.Equal((90L, 0, 0L), (shared.HeldBytes, shared.Snapshot().Waiting, cancelled.Snapshot().UsedBytes));
    }

    [Fact]
    public async Task Admit_OwnBudgetFull_DoesNotHoldUpOthersInTheSharedLine()
    {
        var shared = new SharedPrefetchBudget(100);
        var capped = new ReadAdmission(new PrefetchLimits { BudgetBytes = 50 }, concurrency: 4, shared: shared);
        var other = Admission(shared);
        capped.Admit(40, CancellationToken.None);

        // 20 more passes neither its own 50 (40 held) nor stands in the shared line.
        var blocked = AdmitOnThread(capped, 20);
        await Strategies.EventuallyAsync(() => capped.Snapshot().WaitingFor == AdmissionStage.Budget, "the capped prefetch waits for its own budget");
        other.Admit(50, CancellationToken.None);

        Assert.Equal((90L, 0), (shared.HeldBytes, shared.Snapshot().Waiting));
        Assert.False(blocked.IsCompleted);
        capped.ReadEnded(40, null);
        await blocked.WaitAsync(Strategies.Patience);
        Assert.Equal(70L, shared.HeldBytes);
    }

    [Fact]
    public async Task Admit_FirstInLineWhenItsOwnBudgetIsLowered_StepsAside_AndTheNextIsAdmittedAtOnce()
    {
        var shared = new SharedPrefetchBudget(100);
        var holder = Admission(shared);
        var lowered = Admission(shared);
        var next = Admission(shared);
        holder.Admit(60, CancellationToken.None);
        lowered.Admit(20, CancellationToken.None);

        var first = AdmitOnThread(lowered, 50);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 1, "the first waits in the shared line");
        var second = AdmitOnThread(next, 15);
        await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting == 2, "the second queues behind it");

        // Its own budget no longer has room for 50: it leaves the line and waits for its own consumer,
        // and the read behind it, which fits, goes without anyone releasing anything.
        lowered.SetLimits(new PrefetchLimits { BudgetBytes = 40 });
        await second.WaitAsync(Strategies.Patience);

        Assert.False(first.IsCompleted);
        Assert.Equal((95L, 0), (shared.HeldBytes, shared.Snapshot().Waiting));
        // Alone in its own budget it may take 50 of 40 (the oversized rule), once the shared one has room.
        lowered.ReadEnded(20, null);
        holder.ReadEnded(60, null);
        await first.WaitAsync(Strategies.Patience);
        Assert.Equal((65L, 50L), (shared.HeldBytes, lowered.Snapshot().InFlightBytes));
    }

    [Fact]
    public async Task SeveralPipelinesAtOnce_OnRocksDb_NeverHoldMoreThanTheSharedBudget_AndEachDeliversItsSnapshot()
    {
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 4_000_000));
        var budget = 1L << 20;
        var shared = new SharedPrefetchBudget(budget);
        var options = new PrefetchOptions { BudgetBytes = budget, SharedBudget = shared };
        var strategies = new[] { PrefetchStrategy.Adaptive, PrefetchStrategy.Adaptive, PrefetchStrategy.Adaptive, PrefetchStrategy.FixedBatch };
        var pipelines = strategies.Select(strategy => (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, strategy, options with { BaselineBatchDocuments = 64 })).ToList();
        try
        {
            // Nobody takes until the budget is full and a prefetch waits for it: each alone could hold all of it.
            await Strategies.EventuallyAsync(() => shared.Snapshot().Waiting >= 1, "a prefetch waits for the shared budget", () => shared.Snapshot().ToString());
            Assert.InRange(shared.HeldBytes, 1, budget);

            var received = await Task.WhenAll(pipelines.Select(pipeline => Task.Run(() => Strategies.DrainWithPatienceAsync(pipeline, maxBytes: 64 << 10))));

            foreach (var documents in received)
            {
                // Reads complete out of key order: every document once, in whatever order it was ready.
                Assert.Equal(expected.Select(document => document.Id).Order(StringComparer.Ordinal), documents.Select(document => document.Id).Order(StringComparer.Ordinal));
            }

            var snapshot = shared.Snapshot();
            Assert.InRange(snapshot.HighWaterMarkBytes, 1, budget);
            Assert.Equal(0L, snapshot.LargestOversizedAdmission);
            Assert.True(snapshot.WaitedReservations >= 1);
            Assert.Equal(0L, snapshot.HeldBytes);
            Assert.All(pipelines, pipeline => Assert.Same(shared, pipeline.Admission.Shared));
        }
        finally
        {
            foreach (var pipeline in pipelines)
            {
                await pipeline.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);
            }
        }

        Assert.Equal(0L, shared.HeldBytes);
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public async Task DisposedMidRun_ReturnsEverythingToTheSharedBudget_SoAnotherPrefetchReadsOn()
    {
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 2_000_000));
        var shared = new SharedPrefetchBudget(256 << 10);
        var options = new PrefetchOptions { BudgetBytes = 256 << 10, SharedBudget = shared };
        var abandoned = Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, options);
        await Strategies.EventuallyAsync(() => shared.HeldBytes > 0, "the first prefetch holds part of the budget");
        await using var second = Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, options);

        await abandoned.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);
        var received = await Strategies.DrainWithPatienceAsync(second, maxBytes: 64 << 10);

        Assert.Equal(expected.Count, received.Count);
        Assert.Equal(0L, shared.HeldBytes);
    }

    private static ReadAdmission Admission(SharedPrefetchBudget shared) =>
        new(new PrefetchLimits { BudgetBytes = 1000 }, concurrency: 4, shared: shared);

    private static Task AdmitOnThread(ReadAdmission admission, long bytes, CancellationToken cancellationToken = default) =>
        Task.Factory.StartNew(() => admission.Admit(bytes, cancellationToken), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
}
