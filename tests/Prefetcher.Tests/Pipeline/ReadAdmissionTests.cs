using System.Collections.Concurrent;
using System.Diagnostics;

namespace Indexing.Prefetcher.Tests;

/// <summary>The planner's one admission point: budget, MB/s cap, concurrency and read-ahead credits.</summary>
public sealed class ReadAdmissionTests
{
    [Fact]
    public void Admit_Fits_TakesBytesAndASlotAtOnce()
    {
        var admission = Admission(limit: 100, concurrency: 2);

        admission.Admit(60, CancellationToken.None);
        admission.Admit(40, CancellationToken.None);

        var snapshot = admission.Snapshot();
        Assert.Equal((100L, 100L, 2, 0L), (snapshot.InFlightBytes, snapshot.HighWaterMarkBytes, snapshot.Running, snapshot.WaitedReservations));
    }

    [Fact]
    public async Task Admit_DoesNotFit_WaitsUntilTheConsumerReleasesBytes()
    {
        var admission = Holding(80);

        var waiter = AdmitOnThread(admission, 30);
        await WaitingForAsync(admission, AdmissionStage.Budget);
        admission.ReadEnded(80, 80);
        Assert.False(waiter.IsCompleted);
        admission.Release(50);
        await waiter.WaitAsync(Strategies.Patience);

        var snapshot = admission.Snapshot();
        Assert.Equal((30L, 30L, 1L), (snapshot.InFlightBytes, snapshot.BufferedBytes, snapshot.WaitedReservations));
        Assert.True(admission.BudgetWait.Total > TimeSpan.Zero);
    }

    [Fact]
    public void Admit_OversizedWhenEmpty_AdmittedAloneAndTrackedApart()
    {
        var admission = Admission(limit: 100);

        admission.Admit(250, CancellationToken.None);

        var snapshot = admission.Snapshot();
        Assert.Equal((250L, 250L, 0L), (snapshot.InFlightBytes, snapshot.LargestOversizedAdmission, snapshot.HighWaterMarkBytes));
    }

    [Fact]
    public async Task Admit_OversizedWhileOthersHeld_WaitsUntilNothingIsHeldThenHoldsTheBudgetAlone()
    {
        var admission = Holding(10);
        var giant = AdmitOnThread(admission, 250);
        await WaitingForAsync(admission, AdmissionStage.Budget);

        admission.ReadEnded(10, 10);
        Assert.False(giant.IsCompleted);
        admission.Release(10);
        await giant.WaitAsync(Strategies.Patience);

        // Held alone: the next read waits until usage is back under the limit with room for it.
        var small = AdmitOnThread(admission, 10);
        await WaitingForAsync(admission, AdmissionStage.Budget);
        admission.ReadEnded(250, 250);
        admission.Release(150);
        Assert.False(small.IsCompleted);
        admission.Release(10);
        await small.WaitAsync(Strategies.Patience);
        Assert.Equal((250L, 100L), (admission.Snapshot().LargestOversizedAdmission, admission.Snapshot().HighWaterMarkBytes));
    }

    [Theory]
    [InlineData(nameof(AdmissionStage.Credit))]
    [InlineData(nameof(AdmissionStage.Budget))]
    [InlineData(nameof(AdmissionStage.Slot))]
    public async Task Admit_CancelledWhileWaiting_ThrowsHoldingNothing(string waitingFor)
    {
        // Blocked at each stage in turn (no credit; 90 of 100 bytes held; the one slot taken): a cancel
        // returns whatever the stages before it took.
        var stage = Enum.Parse<AdmissionStage>(waitingFor);
        var admission = new ReadAdmission(new PrefetchLimits { BudgetBytes = 100 }, concurrency: 1, credits: stage == AdmissionStage.Credit ? 0 : null);
        if (stage != AdmissionStage.Credit)
        {
            admission.Admit(stage == AdmissionStage.Budget ? 90 : 10, CancellationToken.None);
        }

        var before = admission.Snapshot();
        using var cancel = new CancellationTokenSource();
        var waiter = AdmitOnThread(admission, 20, cancel.Token);
        await WaitingForAsync(admission, stage);

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiter.WaitAsync(Strategies.Patience));
        var after = admission.Snapshot();
        Assert.Equal((before.InFlightBytes, before.Running, AdmissionStage.None), (after.InFlightBytes, after.Running, after.WaitingFor));
    }

    [Fact]
    public void Admit_AlreadyCancelledToken_ThrowsEvenIfItFits()
    {
        var admission = Admission(limit: 100);

        Assert.ThrowsAny<OperationCanceledException>(() => admission.Admit(10, new CancellationToken(canceled: true)));
        Assert.Equal(0, admission.Snapshot().InFlightBytes);
    }

    [Fact]
    public async Task SetLimits_BudgetRaised_AdmitsTheWaiter()
    {
        var admission = Holding(100);
        var waiter = AdmitOnThread(admission, 50);
        await WaitingForAsync(admission, AdmissionStage.Budget);

        admission.SetLimits(new PrefetchLimits { BudgetBytes = 150 });

        await waiter.WaitAsync(Strategies.Patience);
        Assert.Equal((150L, 150L), (admission.Snapshot().InFlightBytes, admission.Limits.BudgetBytes));
    }

    [Fact]
    public async Task SetLimits_BudgetLowered_KeepsHeldBytesAndAdmitsOnlyOnceUsageDrops()
    {
        var admission = Admission(limit: 100, concurrency: 8);
        admission.Admit(50, CancellationToken.None);
        admission.Admit(30, CancellationToken.None);

        admission.SetLimits(new PrefetchLimits { BudgetBytes = 50 });
        var waiter = AdmitOnThread(admission, 10);
        await WaitingForAsync(admission, AdmissionStage.Budget);
        Assert.Equal(80, admission.Snapshot().InFlightBytes);

        admission.ReadEnded(30, null);
        Assert.False(waiter.IsCompleted);
        admission.ReadEnded(50, 10);
        await waiter.WaitAsync(Strategies.Patience);
        Assert.Equal(20, admission.Snapshot().UsedBytes);
    }

    [Fact]
    public async Task SetConcurrency_Lowered_RunningReadsKeepTheirSlotsAndNewOnesWait()
    {
        var admission = Admission(limit: 1000, concurrency: 3);
        for (var i = 0; i < 3; i++)
        {
            admission.Admit(1, CancellationToken.None);
        }

        admission.SetConcurrency(1);
        var waiter = AdmitOnThread(admission, 1);
        await WaitingForAsync(admission, AdmissionStage.Slot);
        admission.ReadEnded(1, 1);
        admission.ReadEnded(1, 1);
        Assert.Equal(AdmissionStage.Slot, admission.Snapshot().WaitingFor);
        admission.ReadEnded(1, 1);
        await waiter.WaitAsync(Strategies.Patience);

        Assert.Equal((1, 1), (admission.Snapshot().Running, admission.Snapshot().ConcurrencyLimit));
    }

    [Fact]
    public void SetLimits_MaxConcurrencyBelowL_CapsIt()
    {
        var admission = Admission(limit: 1000, concurrency: 6);

        admission.SetLimits(new PrefetchLimits { BudgetBytes = 1000, MaxConcurrency = 2 });

        Assert.Equal(2, admission.Snapshot().ConcurrencyLimit);
    }

    [Fact]
    public async Task GrantCredit_CreditsInUse_EachAdmitsOneRead()
    {
        var admission = new ReadAdmission(new PrefetchLimits { BudgetBytes = 1000 }, concurrency: 8, credits: 1);
        admission.Admit(1, CancellationToken.None);

        var second = AdmitOnThread(admission, 1);
        await WaitingForAsync(admission, AdmissionStage.Credit);
        admission.GrantCredit();
        await second.WaitAsync(Strategies.Patience);

        Assert.Equal(2, admission.Snapshot().Running);
    }

    [Fact]
    public void ReadEnded_SmallerThanReserved_BuffersWhatWasRead()
    {
        var admission = Holding(70);

        admission.ReadEnded(70, 50);

        var snapshot = admission.Snapshot();
        Assert.Equal((0L, 50L, 0, 0L), (snapshot.InFlightBytes, snapshot.BufferedBytes, snapshot.Running, snapshot.Overcommits));
    }

    [Fact]
    public void ReadEnded_LargerThanReserved_BuffersItAndCountsAnOvercommit()
    {
        var admission = Holding(90);

        admission.ReadEnded(90, 120);

        var snapshot = admission.Snapshot();
        Assert.Equal((120L, 1L, 120L), (snapshot.BufferedBytes, snapshot.Overcommits, snapshot.HighWaterMarkBytes));
    }

    [Fact]
    public void ReadEnded_Unread_ReturnsTheReservationAndTheSlot()
    {
        var admission = Holding(70);

        admission.ReadEnded(70, null);

        Assert.Equal((0L, 0), (admission.Snapshot().UsedBytes, admission.Snapshot().Running));
    }

    [Fact]
    public void ReadEnded_MoreThanWasAdmitted_ThrowsAndChangesNothing()
    {
        var admission = Holding(10);

        var error = Assert.Throws<InvalidOperationException>(() => admission.ReadEnded(11, 11));

        Assert.Contains("11", error.Message, StringComparison.Ordinal);
        Assert.Equal((10L, 0L), (admission.Snapshot().InFlightBytes, admission.Snapshot().BufferedBytes));
        Assert.Throws<InvalidOperationException>(() => Admission(limit: 10).ReadEnded(0, null));
    }

    [Fact]
    public void Release_MoreThanBuffered_ThrowsNamingBothAmounts()
    {
        var admission = Holding(10);
        admission.ReadEnded(10, 10);

        var error = Assert.Throws<InvalidOperationException>(() => admission.Release(11));

        Assert.Contains("11", error.Message, StringComparison.Ordinal);
        Assert.Contains("10", error.Message, StringComparison.Ordinal);
        admission.Release(4);
        Assert.Equal(6, admission.Snapshot().BufferedBytes);
    }

    [Fact]
    public void Methods_NegativeBytes_Throw()
    {
        var admission = Admission(limit: 100);

        Assert.Throws<ArgumentOutOfRangeException>(() => admission.Admit(-1, CancellationToken.None));
        Assert.Throws<ArgumentOutOfRangeException>(() => admission.ReadEnded(0, -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => admission.Release(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => admission.SetConcurrency(0));
    }

    [Fact]
    public void Admit_NoRateCap_NeverWaitsForTokens()
    {
        var admission = Admission(limit: long.MaxValue);

        admission.Admit(long.MaxValue / 2, CancellationToken.None);

        Assert.Equal(TimeSpan.Zero, admission.RateWait.Total);
    }

    [Fact]
    public void Admit_ReadBiggerThanTheBucket_StartsAtOnceAndDelaysTheNext()
    {
        // 10 MB/s: the bucket holds 2.5 MB. A 5 MB read leaves 2.5 MB of debt, about 0.25 s.
        var admission = Admission(limit: long.MaxValue, concurrency: 8, rate: 10_000_000);

        // The debt runs from the big read, so time is measured from before it: a thread stalled between
        // the two calls shortens the second wait but not the total. (Lower bounds only: delays lengthen.)
        var stopwatch = Stopwatch.StartNew();
        admission.Admit(5_000_000, CancellationToken.None);
        var afterBig = admission.RateWait.Total;
        var gap = stopwatch.Elapsed;
        admission.Admit(1000, CancellationToken.None);

        Assert.Equal(TimeSpan.Zero, afterBig);
        Assert.True(stopwatch.Elapsed >= TimeSpan.FromMilliseconds(240), $"Both reads took only {stopwatch.Elapsed}.");
        // Its own wait starts a little after the gap was read; 100 ms of the debt are left for that.
        Assert.True(admission.RateWait.Total >= TimeSpan.FromMilliseconds(150) - gap, $"The next read waited {admission.RateWait.Total}, {gap} after the big one.");
    }

    [Fact]
    public async Task SetLimits_CapLiftedWhileWaiting_ReleasesTheWaiterAtOnce()
    {
        var admission = Admission(limit: long.MaxValue, concurrency: 8, rate: 1000);
        admission.Admit(1_000_000, CancellationToken.None);

        // 1000 s of debt. The waiter stamps its own release, so the measure below does not include the thread pool.
        long releasedAt = 0;
        var waiter = Task.Factory.StartNew(
            () =>
            {
                admission.Admit(1000, CancellationToken.None);
                Volatile.Write(ref releasedAt, Stopwatch.GetTimestamp());
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);
        await WaitingForAsync(admission, AdmissionStage.Rate);

        var liftedAt = Stopwatch.GetTimestamp();
        admission.SetLimits(new PrefetchLimits { BudgetBytes = long.MaxValue });
        await waiter.WaitAsync(Strategies.Patience);

        // The waiter re-checks at least once a second anyway; lifting must wake it at once (a missing
        // wake-up shows as a release up to a second late).
        var lag = Stopwatch.GetElapsedTime(liftedAt, Volatile.Read(ref releasedAt));
        Assert.True(lag < TimeSpan.FromMilliseconds(500), $"The waiter was released {lag} after the cap was lifted.");
    }

    [Fact]
    public async Task Admit_DebtLongerThanTheMonitorTimeoutCanHold_WaitsUntilCancelled()
    {
        // 1 B/s: a 4 MiB read leaves weeks of debt, more than int.MaxValue ms. The next read must
        // simply wait (here until cancelled), not throw ArgumentOutOfRangeException.
        var admission = Admission(limit: long.MaxValue, concurrency: 8, rate: 1);
        admission.Admit(4 * 1024 * 1024, CancellationToken.None);
        using var cancel = new CancellationTokenSource();
        var waiter = AdmitOnThread(admission, 1, cancel.Token);
        await WaitingForAsync(admission, AdmissionStage.Rate);

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiter.WaitAsync(Strategies.Patience));
    }

    [Fact]
    public async Task OnePlannerManyReadersAndAConsumer_RandomSizes_NeverExceedTheBudgetAndEndEmpty()
    {
        const long Limit = 100_000;
        const int Reads = 8_000;
        var admission = Admission(limit: Limit, concurrency: 8);
        var admitted = new BlockingCollection<long>();
        var buffered = new BlockingCollection<long>();
        var random = new Random(7);
        var cancelled = 0;

        // One planner, as in the pipeline: mostly small reads, some large, a few bigger than the budget;
        // some give up while waiting.
        var planner = Task.Factory.StartNew(
            () =>
            {
                for (var i = 0; i < Reads; i++)
                {
                    var roll = random.Next(1000);
                    long bytes = roll < 990 ? random.Next(1, 10_000) : roll < 998 ? random.Next(10_000, 90_000) : random.Next(100_001, 200_000);
                    using var timeout = new CancellationTokenSource();
                    if (roll % 7 == 0)
                    {
                        timeout.CancelAfter(random.Next(2));
                    }

                    try
                    {
                        admission.Admit(bytes, timeout.Token);
                        admitted.Add(bytes);
                    }
                    catch (OperationCanceledException)
                    {
                        cancelled++;
                    }
                }

                admitted.CompleteAdding();
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);
        var readers = Enumerable.Range(0, 4).Select(seed => Task.Run(() =>
        {
            var local = new Random(seed);
            foreach (var bytes in admitted.GetConsumingEnumerable())
            {
                var actual = local.Next(5) == 0 ? (long?)null : bytes - local.Next((int)Math.Min(bytes, 100));
                admission.ReadEnded(bytes, actual);
                if (actual is { } read)
                {
                    buffered.Add(read);
                }
            }
        })).ToArray();
        var consumer = Task.Run(() =>
        {
            foreach (var bytes in buffered.GetConsumingEnumerable())
            {
                admission.Release(bytes);
            }
        });

        // Hang guards, not timing assertions: a lost wake-up fails here instead of hanging.
        await planner.WaitAsync(TimeSpan.FromSeconds(60));
        await Task.WhenAll(readers).WaitAsync(TimeSpan.FromSeconds(60));
        buffered.CompleteAdding();
        await consumer.WaitAsync(TimeSpan.FromSeconds(60));

        var snapshot = admission.Snapshot();
        Assert.Equal((0L, 0, 0L), (snapshot.UsedBytes, snapshot.Running, snapshot.Overcommits));
        Assert.InRange(snapshot.HighWaterMarkBytes, 1, Limit);
        Assert.True(snapshot.LargestOversizedAdmission > Limit);
        Assert.True(snapshot.WaitedReservations > 0, "The planner never waited for budget: the test stopped exercising waits.");
        Assert.True(cancelled < Reads);
    }

    private static ReadAdmission Admission(long limit, int concurrency = 1, long? rate = null) =>
        new(new PrefetchLimits { BudgetBytes = limit, MaxBytesPerSecond = rate }, concurrency);

    // A 100-byte budget, one slot per read, with one read of these bytes admitted.
    private static ReadAdmission Holding(long bytes)
    {
        var admission = Admission(limit: 100, concurrency: 4);
        admission.Admit(bytes, CancellationToken.None);
        return admission;
    }

    // Admit blocks: on a thread of its own, as the planner does.
    private static Task AdmitOnThread(ReadAdmission admission, long bytes, CancellationToken cancellationToken = default) =>
        Task.Factory.StartNew(
            () => admission.Admit(bytes, cancellationToken), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);

    private static Task WaitingForAsync(ReadAdmission admission, AdmissionStage stage) =>
        Strategies.EventuallyAsync(() => admission.Snapshot().WaitingFor == stage, $"the admission waits for {stage}");
}
