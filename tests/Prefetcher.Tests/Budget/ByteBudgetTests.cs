using System.Threading.Channels;

namespace Indexing.Prefetcher.Tests;

public sealed class ByteBudgetTests
{
    [Fact]
    public void TryReserve_Fits_AddsToInFlight()
    {
        using var budget = new ByteBudget(100);

        Assert.True(budget.TryReserve(60));
        Assert.True(budget.TryReserve(40));

        Assert.Equal(100, budget.InFlightBytes);
        Assert.Equal(100, budget.HighWaterMarkBytes);
    }

    [Fact]
    public void TryReserve_DoesNotFit_ReturnsFalseAndChangesNothing()
    {
        using var budget = Holding(60);

        Assert.False(budget.TryReserve(41));

        Assert.Equal(60, budget.InFlightBytes);
    }

    [Fact]
    public void ReserveAsync_Fits_CompletesSynchronously()
    {
        using var budget = new ByteBudget(100);

        var reservation = budget.ReserveAsync(100, CancellationToken.None);

        Assert.True(reservation.IsCompletedSuccessfully);
        Assert.Equal(100, budget.InFlightBytes);
        Assert.Equal(0, budget.WaitingCount);
    }

    [Fact]
    public async Task ReserveAsync_DoesNotFit_WaitsUntilBytesAreReleased()
    {
        using var budget = Holding(80);

        var reservation = budget.ReserveAsync(30, CancellationToken.None).AsTask();
        Assert.False(reservation.IsCompleted);
        Assert.Equal(1, budget.WaitingCount);

        budget.CompleteRead(80, 80);
        Assert.False(reservation.IsCompleted);

        budget.Release(50);
        await reservation;

        Assert.Equal(30, budget.InFlightBytes);
        Assert.Equal(30, budget.BufferedBytes);
        Assert.Equal(1, budget.WaitedReservations);
    }

    [Fact]
    public async Task ReserveAsync_BigHeadWaiter_LaterSmallWaitersQueueBehindIt()
    {
        using var budget = Holding(50);
        var big = budget.ReserveAsync(90, CancellationToken.None).AsTask();
        var small = budget.ReserveAsync(20, CancellationToken.None).AsTask();

        // 20 bytes would fit next to the 50 held, but the 90-byte head must not be overtaken.
        Assert.False(small.IsCompleted);
        Assert.False(budget.TryReserve(1));

        budget.CancelRead(50);
        await big;
        Assert.False(small.IsCompleted);

        budget.CancelRead(90);
        await small;
        Assert.Equal(20, budget.InFlightBytes);
    }

    [Fact]
    public async Task ReserveAsync_SeveralWaiters_AdmittedInArrivalOrderAsTheyFit()
    {
        using var budget = Holding(100);
        var first = budget.ReserveAsync(40, CancellationToken.None).AsTask();
        var second = budget.ReserveAsync(40, CancellationToken.None).AsTask();
        var third = budget.ReserveAsync(40, CancellationToken.None).AsTask();

        budget.CancelRead(100);

        await Task.WhenAll(first, second);
        Assert.False(third.IsCompleted);
        Assert.Equal(80, budget.InFlightBytes);
        Assert.Equal(1, budget.WaitingCount);
    }

    [Fact]
    public void TryReserve_OversizedWhenEmpty_AdmittedAloneAndTrackedSeparately()
    {
        using var budget = new ByteBudget(100);

        Assert.True(budget.TryReserve(250));

        Assert.Equal(250, budget.InFlightBytes);
        Assert.Equal(250, budget.LargestOversizedAdmission);
        Assert.Equal(0, budget.HighWaterMarkBytes);
        Assert.False(budget.TryReserve(1));
    }

    [Fact]
    public async Task ReserveAsync_OversizedWhileOthersHeld_WaitsUntilUsageIsZeroAndBlocksOthers()
    {
        using var budget = Holding(10);
        var oversized = budget.ReserveAsync(250, CancellationToken.None).AsTask();
        var small = budget.ReserveAsync(10, CancellationToken.None).AsTask();

        budget.CompleteRead(10, 10);
        Assert.False(oversized.IsCompleted);

        budget.Release(10);
        await oversized;

        // Held alone: the small waiter stays queued until usage is back under the limit with room.
        Assert.False(small.IsCompleted);
        budget.CompleteRead(250, 250);
        budget.Release(150);
        Assert.False(small.IsCompleted);
        budget.Release(10);
        await small;

        Assert.Equal(250, budget.LargestOversizedAdmission);
        Assert.Equal(100, budget.HighWaterMarkBytes);
    }

    [Fact]
    public async Task ReserveAsync_HeadWaiterCancelled_NextWaiterThatNowFitsIsAdmitted()
    {
        using var budget = Holding(50);
        using var cts = new CancellationTokenSource();
        var big = budget.ReserveAsync(90, cts.Token).AsTask();
        var small = budget.ReserveAsync(30, CancellationToken.None).AsTask();
        var tooBig = budget.ReserveAsync(30, CancellationToken.None).AsTask();

        await cts.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => big);
        await small;
        Assert.False(tooBig.IsCompleted);
        Assert.Equal(80, budget.InFlightBytes);
        Assert.Equal(1, budget.WaitingCount);
    }

    [Fact]
    public async Task ReserveAsync_MiddleWaiterCancelled_LeavesQueueWithoutBytesOrReordering()
    {
        using var budget = Holding(100);
        using var cts = new CancellationTokenSource();
        var head = budget.ReserveAsync(60, CancellationToken.None).AsTask();
        var middle = budget.ReserveAsync(30, cts.Token).AsTask();
        var tail = budget.ReserveAsync(40, CancellationToken.None).AsTask();

        await cts.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => middle);

        // Nothing fits yet, so nobody may be admitted: in particular not the tail past the head.
        Assert.False(head.IsCompleted);
        Assert.False(tail.IsCompleted);
        Assert.Equal(2, budget.WaitingCount);
        Assert.Equal(100, budget.InFlightBytes);

        budget.CancelRead(100);
        await Task.WhenAll(head, tail);
        Assert.Equal(100, budget.InFlightBytes);
        Assert.Equal(0, budget.WaitingCount);
    }

    [Fact]
    public async Task ReserveAsync_AlreadyCancelledToken_CancelsEvenIfItFits()
    {
        using var budget = new ByteBudget(100);

        var reservation = budget.ReserveAsync(10, new CancellationToken(canceled: true)).AsTask();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reservation);
        Assert.Equal(0, budget.InFlightBytes);
    }

    [Fact]
    public async Task ReserveAsync_CancelledAfterAdmission_KeepsTheReservation()
    {
        using var budget = Holding(100);
        using var cts = new CancellationTokenSource();
        var reservation = budget.ReserveAsync(40, cts.Token).AsTask();

        budget.CancelRead(100);
        await cts.CancelAsync();

        await reservation;
        Assert.Equal(40, budget.InFlightBytes);
    }

    [Fact]
    public async Task SetLimit_Raised_AdmitsWaitersThatNowFit()
    {
        using var budget = Holding(100);
        var waiter = budget.ReserveAsync(50, CancellationToken.None).AsTask();

        budget.SetLimit(150);

        await waiter;
        Assert.Equal(150, budget.InFlightBytes);
        Assert.Equal(150, budget.Limit);
    }

    [Fact]
    public async Task SetLimit_Lowered_KeepsHeldBytesAndStopsAdmissionsUntilUsageDrops()
    {
        using var budget = Holding(80);

        budget.SetLimit(50);

        Assert.Equal(80, budget.InFlightBytes);
        Assert.False(budget.TryReserve(1));
        var waiter = budget.ReserveAsync(10, CancellationToken.None).AsTask();

        budget.CancelRead(30);
        Assert.False(waiter.IsCompleted);

        budget.CancelRead(10);
        await waiter;
        Assert.Equal(50, budget.InFlightBytes);
    }

    [Fact]
    public void CompleteRead_SmallerThanReserved_BuffersActualAndFreesTheRest()
    {
        using var budget = Holding(70);

        budget.CompleteRead(70, 50);

        Assert.Equal(new ByteBudgetSnapshot(100, 0, 50, 0, 70, 0, 0, 0), budget.Snapshot());
    }

    [Fact]
    public void CompleteRead_LargerThanReserved_AccountsActualAndCountsOvercommit()
    {
        using var budget = Holding(90);

        budget.CompleteRead(90, 120);

        var snapshot = budget.Snapshot();
        Assert.Equal(120, snapshot.BufferedBytes);
        Assert.Equal(1, snapshot.Overcommits);
        Assert.Equal(120, snapshot.HighWaterMarkBytes);
    }

    [Fact]
    public void CancelRead_ReturnsReservation()
    {
        using var budget = Holding(70);

        budget.CancelRead(70);

        Assert.Equal(0, budget.InFlightBytes);
        Assert.Equal(0, budget.BufferedBytes);
    }

    [Fact]
    public void Release_PartOfBuffered_LeavesTheRestBuffered()
    {
        using var budget = Holding(70);
        budget.CompleteRead(70, 70);

        budget.Release(20);

        Assert.Equal(50, budget.BufferedBytes);
        Assert.True(budget.TryReserve(50));
    }

    [Fact]
    public void Release_MoreThanBuffered_ThrowsNamingBothAmounts()
    {
        using var budget = Holding(10);
        budget.CompleteRead(10, 10);

        var error = Assert.Throws<InvalidOperationException>(() => budget.Release(11));

        Assert.Contains("11", error.Message, StringComparison.Ordinal);
        Assert.Contains("10", error.Message, StringComparison.Ordinal);
        Assert.Equal(10, budget.BufferedBytes);
    }

    [Fact]
    public void CompleteRead_MoreThanInFlight_ThrowsAndChangesNothing()
    {
        using var budget = Holding(10);

        var error = Assert.Throws<InvalidOperationException>(() => budget.CompleteRead(11, 11));

        Assert.Contains("11", error.Message, StringComparison.Ordinal);
        Assert.Equal(10, budget.InFlightBytes);
        Assert.Equal(0, budget.BufferedBytes);
    }

    [Fact]
    public void Methods_NegativeBytes_ThrowArgumentOutOfRangeNamingTheValue()
    {
        using var budget = new ByteBudget(100);

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => budget.TryReserve(-5));
        Assert.Contains("-5", error.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = budget.ReserveAsync(-1, CancellationToken.None); });
        Assert.Throws<ArgumentOutOfRangeException>(() => budget.CompleteRead(0, -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => budget.CancelRead(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => budget.Release(-1));
        Assert.Throws<ArgumentOutOfRangeException>(() => budget.SetLimit(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new ByteBudget(0));
    }

    [Fact]
    public async Task Close_PendingWaiters_FailWithObjectDisposed()
    {
        var budget = Holding(100);
        var first = budget.ReserveAsync(10, CancellationToken.None).AsTask();
        var second = budget.ReserveAsync(10, CancellationToken.None).AsTask();

        budget.Close();

        await Assert.ThrowsAsync<ObjectDisposedException>(() => first);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => second);
        Assert.Equal(0, budget.WaitingCount);
        Assert.Equal(100, budget.InFlightBytes);
    }

    [Fact]
    public void Dispose_Twice_LaterReservationsThrowButReturnsStillAccount()
    {
        var budget = Holding(30);

        budget.Dispose();
        budget.Dispose();

        Assert.Throws<ObjectDisposedException>(() => budget.TryReserve(1));
        Assert.Throws<ObjectDisposedException>(() => { _ = budget.ReserveAsync(1, CancellationToken.None); });
        Assert.Throws<ObjectDisposedException>(() => budget.SetLimit(200));
        budget.CompleteRead(30, 30);
        budget.Release(30);
        Assert.Equal(0, budget.Snapshot().UsedBytes);
    }

    [Fact]
    public async Task ConcurrentProducersAndConsumer_RandomSizes_NeverExceedLimitAndEndEmpty()
    {
        const long Limit = 100_000;
        const int Producers = 8;
        const int ReadsPerProducer = 2_000;
        using var budget = new ByteBudget(Limit);
        var buffered = Channel.CreateUnbounded<long>();

        var consumer = Task.Run(async () =>
        {
            await foreach (var bytes in buffered.Reader.ReadAllAsync())
            {
                budget.Release(bytes);
            }
        });

        var producers = Enumerable.Range(0, Producers).Select(seed => Task.Run(async () =>
        {
            var random = new Random(seed);
            for (var i = 0; i < ReadsPerProducer; i++)
            {
                // Mostly small, some large, a few bigger than the whole limit.
                var roll = random.Next(1000);
                long reserved = roll < 990 ? random.Next(1, 10_000) : roll < 998 ? random.Next(10_000, 90_000) : random.Next(100_001, 200_000);
                // Some reservations give up while queued (or before), exercising waiter removal.
                using var timeout = new CancellationTokenSource();
                if (roll % 7 == 0)
                {
                    timeout.CancelAfter(random.Next(2));
                }

                try
                {
                    await budget.ReserveAsync(reserved, timeout.Token);
                }
                catch (OperationCanceledException)
                {
                    continue;
                }

                await Task.Yield();
                if (roll % 5 == 0)
                {
                    budget.CancelRead(reserved);
                    continue;
                }

                var actual = reserved - random.Next((int)Math.Min(reserved, 100));
                budget.CompleteRead(reserved, actual);
                await buffered.Writer.WriteAsync(actual);
            }
        })).ToArray();

        // A hang guard, not a timing assertion: a lost wake-up fails here instead of hanging.
        await Task.WhenAll(producers).WaitAsync(TimeSpan.FromSeconds(60));
        buffered.Writer.Complete();
        await consumer.WaitAsync(TimeSpan.FromSeconds(60));

        var snapshot = budget.Snapshot();
        Assert.Equal(0, snapshot.UsedBytes);
        Assert.Equal(0, snapshot.WaitingCount);
        Assert.Equal(0, snapshot.Overcommits);
        Assert.InRange(snapshot.HighWaterMarkBytes, 1, Limit);
        Assert.True(snapshot.LargestOversizedAdmission > Limit);

        // With a limit of ten average reads for eight producers, queueing is certain in practice
        // (about a thousand waits per run); zero would mean the test stopped exercising waiters.
        Assert.True(budget.WaitedReservations > 0);
    }

    // A 100-byte budget with some bytes already reserved: the usual starting point.
    private static ByteBudget Holding(long inFlightBytes)
    {
        var budget = new ByteBudget(100);
        Assert.True(budget.TryReserve(inFlightBytes));
        return budget;
    }
}
