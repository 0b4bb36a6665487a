using System.Diagnostics;

namespace Indexing.Prefetcher.Tests;

public sealed class ByteRateLimiterTests
{
    [Fact]
    public void Acquire_NoCap_NeverWaits()
    {
        using var limiter = new ByteRateLimiter(null);
        var timer = new WaitTimer();

        limiter.Acquire(long.MaxValue / 2, timer, CancellationToken.None);

        Assert.Equal(TimeSpan.Zero, timer.Total);
    }

    [Fact]
    public void Acquire_ReadBiggerThanTheBucket_StartsAtOnceAndDelaysTheNext()
    {
        // 10 MB/s: the bucket holds 2.5 MB. A 5 MB read leaves 2.5 MB of debt, about 0.25 s.
        using var limiter = new ByteRateLimiter(10_000_000);
        var timer = new WaitTimer();

        // The debt runs from the big read, so time is measured from before it: a thread stalled between
        // the two calls shortens the second wait but not the total. (Lower bounds only: delays lengthen.)
        var stopwatch = Stopwatch.StartNew();
        limiter.Acquire(5_000_000, timer, CancellationToken.None);
        var afterBig = timer.Total;
        var gap = stopwatch.Elapsed;
        limiter.Acquire(1000, timer, CancellationToken.None);

        Assert.Equal(TimeSpan.Zero, afterBig);
        Assert.True(stopwatch.Elapsed >= TimeSpan.FromMilliseconds(240), $"Both reads took only {stopwatch.Elapsed}.");
        // Its own wait starts a little after the gap was read; 100 ms of the debt are left for that.
        Assert.True(timer.Total >= TimeSpan.FromMilliseconds(150) - gap, $"The next read waited {timer.Total}, {gap} after the big one.");
    }

    [Fact]
    public async Task SetRate_CapLiftedWhileWaiting_ReleasesTheWaiterAtOnce()
    {
        using var limiter = new ByteRateLimiter(1000);
        var timer = new WaitTimer();
        limiter.Acquire(1_000_000, timer, CancellationToken.None);

        // 1000 s of debt. The waiter has a thread of its own and stamps its own release, so the
        // measure below does not include the thread pool.
        long releasedAt = 0;
        var waiter = Task.Factory.StartNew(
            () =>
            {
                limiter.Acquire(1000, timer, CancellationToken.None);
                Volatile.Write(ref releasedAt, Stopwatch.GetTimestamp());
            },
            CancellationToken.None,
            TaskCreationOptions.LongRunning,
            TaskScheduler.Default);
        await Strategies.EventuallyAsync(() => timer.Total > TimeSpan.Zero, "the waiter waits on the cap");

        var liftedAt = Stopwatch.GetTimestamp();
        limiter.SetRate(null);
        await waiter.WaitAsync(Strategies.Patience);

        // The waiter re-checks at least once a second anyway; lifting must wake it at once (a missing
        // wake-up shows as a release up to a second late).
        var lag = Stopwatch.GetElapsedTime(liftedAt, Volatile.Read(ref releasedAt));
        Assert.True(lag < TimeSpan.FromMilliseconds(500), $"The waiter was released {lag} after the cap was lifted.");
    }

    [Fact]
    public async Task Acquire_DebtLongerThanTheEventTimeoutCanHold_WaitsUntilCancelled()
    {
        // 1 B/s: a 4 MiB read leaves weeks of debt, more than int.MaxValue ms. The next read must
        // simply wait (here until cancelled), not throw ArgumentOutOfRangeException.
        using var limiter = new ByteRateLimiter(1);
        var timer = new WaitTimer();
        limiter.Acquire(4 * 1024 * 1024, timer, CancellationToken.None);
        using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));

        var exception = await Record.ExceptionAsync(() => Task.Run(() => limiter.Acquire(1, timer, cancellation.Token)));

        Assert.IsAssignableFrom<OperationCanceledException>(exception);
    }
}
