namespace Indexing.Prefetcher.Tests;

public sealed class FifoSlotGateTests
{
    [Fact]
    public async Task Release_SeveralWaiters_GrantsTheOldestFirst()
    {
        var gate = new FifoSlotGate(1);
        await gate.AcquireAsync(CancellationToken.None);
        var waiters = Enumerable.Range(0, 4).Select(_ => gate.AcquireAsync(CancellationToken.None).AsTask()).ToList();

        for (var granted = 0; granted < waiters.Count; granted++)
        {
            gate.Release();
            await waiters[granted];
            Assert.All(waiters.Skip(granted + 1), w => Assert.False(w.IsCompleted));
        }
        Assert.Equal((1, 0), (gate.InUse, gate.Waiting));
    }

    [Fact]
    public async Task AcquireAsync_FreeSlotWhileOthersWait_DoesNotOvertakeTheQueue()
    {
        var gate = new FifoSlotGate(2);
        await gate.AcquireAsync(CancellationToken.None);
        await gate.AcquireAsync(CancellationToken.None);
        var first = gate.AcquireAsync(CancellationToken.None).AsTask();

        gate.Release();
        var second = gate.AcquireAsync(CancellationToken.None).AsTask();

        Assert.Equal(2, await first);
        Assert.False(second.IsCompleted);
    }

    [Fact]
    public async Task Acquire_BlockingCaller_QueuesBehindEarlierAsyncWaiter()
    {
        var gate = new FifoSlotGate(1);
        gate.Acquire(CancellationToken.None);
        var asyncWaiter = gate.AcquireAsync(CancellationToken.None).AsTask();
        var blockingWaiter = Task.Run(() => gate.Acquire(CancellationToken.None));
        Assert.True(SpinWait.SpinUntil(() => gate.Waiting == 2, TimeSpan.FromSeconds(10)));

        gate.Release();
        await asyncWaiter;

        Assert.False(blockingWaiter.IsCompleted);
        gate.Release();
        Assert.Equal(1, await blockingWaiter);
    }

    [Fact]
    public void Release_WithoutAcquire_Throws()
    {
        Assert.Throws<InvalidOperationException>(() => new FifoSlotGate(1).Release());
    }
}
