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
        Assert.True(timer.Total >= TimeSpan.FromMilliseconds(240) - gap, $"The next read waited {timer.Total}, {gap} after the big one.");
    }

    [Fact]
    public async Task SetRate_CapLiftedWhileWaiting_ReleasesTheWaiterAtOnce()
    {
        using var limiter = new ByteRateLimiter(1000);
        var timer = new WaitTimer();
        limiter.Acquire(1_000_000, timer, CancellationToken.None);

        var waiter = Task.Run(() => limiter.Acquire(1000, timer, CancellationToken.None));
        await Task.Delay(50);
        var waitedWhileCapped = !waiter.IsCompleted;
        limiter.SetRate(null);
        await waiter.WaitAsync(Strategies.Patience);

        Assert.True(waitedWhileCapped);
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
