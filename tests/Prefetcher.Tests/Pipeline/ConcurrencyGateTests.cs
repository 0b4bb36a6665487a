namespace Indexing.Prefetcher.Tests;

public sealed class ConcurrencyGateTests
{
    [Fact]
    public async Task SetLimit_Lowered_RunningKeepTheirSlotsAndNewOnesWait()
    {
        using var gate = new ConcurrencyGate(3);
        gate.Acquire(CancellationToken.None);
        gate.Acquire(CancellationToken.None);
        gate.Acquire(CancellationToken.None);

        gate.SetLimit(1);
        var waiter = Task.Run(() => gate.Acquire(CancellationToken.None));
        gate.Release();
        await Task.Delay(50);
        var waitedWithTwoRunning = !waiter.IsCompleted;
        gate.Release();
        gate.Release();
        await waiter.WaitAsync(Strategies.Patience);

        Assert.True(waitedWithTwoRunning);
        Assert.Equal(1, gate.Running);
        Assert.Equal(1, gate.Limit);
    }

    [Fact]
    public async Task Acquire_Cancelled_ThrowsWithoutTakingASlot()
    {
        using var gate = new ConcurrencyGate(1);
        gate.Acquire(CancellationToken.None);
        using var cancellation = new CancellationTokenSource();

        var waiter = Task.Run(() => gate.Acquire(cancellation.Token));
        cancellation.Cancel();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => waiter.WaitAsync(Strategies.Patience));
        Assert.Equal(1, gate.Running);
    }

    [Fact]
    public void Release_WithoutAcquire_Throws()
    {
        using var gate = new ConcurrencyGate(1);

        Assert.Throws<InvalidOperationException>(gate.Release);
    }
}
