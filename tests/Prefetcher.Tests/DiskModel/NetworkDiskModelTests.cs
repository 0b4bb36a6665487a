namespace Indexing.Prefetcher.Tests;

public sealed class NetworkDiskModelTests
{
    /// <summary>
    /// Far longer than any test waits: a read that ends within <see cref="Strategies.Patience"/> ended
    /// because it was cancelled, so the tests need no tight (flaky) bound of their own.
    /// </summary>
    private static readonly NetworkDiskModelOptions Slow = new() { RequestLatency = TimeSpan.FromMinutes(5) };

    // Both cancel from the test once the read holds its slot, not from a timer: a CancellationTokenSource
    // timer fires on the thread pool, so on a busy machine the cancel itself could come seconds late.

    [Fact]
    public async Task ReadAsync_CancelledDuringServiceTime_ThrowsPromptly()
    {
        var disk = new NetworkDiskModel(Slow);
        using var cancel = new CancellationTokenSource();
        var reading = disk.ReadAsync(1_000_000, cancel.Token).AsTask();
        Assert.Equal(1, disk.ActiveRequests);

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reading.WaitAsync(Strategies.Patience));
        Assert.Equal(0, disk.ActiveRequests);
    }

    [Fact]
    public async Task Read_CancelledDuringServiceTime_ThrowsPromptly()
    {
        var disk = new NetworkDiskModel(Slow);
        using var cancel = new CancellationTokenSource();
        var reading = Task.Factory.StartNew(
            () => disk.Read(1_000_000, cancel.Token), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        await Strategies.EventuallyAsync(() => disk.ActiveRequests == 1, "the read holds its slot");

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reading.WaitAsync(Strategies.Patience));
        Assert.Equal(0, disk.ActiveRequests);
    }

    [Fact]
    public async Task ReadAsync_CancelledWhileQueued_LeavesTheQueueAndFreesNothingItNeverHeld()
    {
        var disk = new NetworkDiskModel(Slow with { UsefulQueueDepth = 1 });
        using var holder = new CancellationTokenSource();
        var holding = disk.ReadAsync(1, holder.Token).AsTask();
        using var cancel = new CancellationTokenSource();
        var queued = disk.ReadAsync(1, cancel.Token).AsTask();
        Assert.Equal((1, 1), (disk.ActiveRequests, disk.QueuedRequests));

        await cancel.CancelAsync();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => queued);
        Assert.Equal((1, 0), (disk.ActiveRequests, disk.QueuedRequests));
        await holder.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => holding);
        Assert.Equal(0, disk.ActiveRequests);
    }

    [Fact]
    public async Task Read_BlockingReaderQueuedBehindAnAsyncOne_IsServedAfterIt()
    {
        // One slot at 1 B/s with no request latency: a read's bytes are its seconds. The async read of
        // 0 bytes queued first must get the freed slot and finish at once; were the blocking read of
        // a million bytes (11 days) served first, it never would.
        var disk = new NetworkDiskModel(new NetworkDiskModelOptions { RequestLatency = TimeSpan.Zero, StreamBandwidthBytesPerSecond = 1, UsefulQueueDepth = 1 });
        using var holder = new CancellationTokenSource();
        using var blocking = new CancellationTokenSource();
        var holding = disk.ReadAsync(1_000_000, holder.Token).AsTask();
        var asyncRead = disk.ReadAsync(0, CancellationToken.None).AsTask();
        var blockingRead = Task.Factory.StartNew(
            () => disk.Read(1_000_000, blocking.Token), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        await Strategies.EventuallyAsync(() => disk.QueuedRequests == 2, "both reads wait for the slot");

        await holder.CancelAsync();

        await asyncRead.WaitAsync(Strategies.Patience);
        await Strategies.EventuallyAsync(() => disk.ActiveRequests == 1 && disk.QueuedRequests == 0, "the blocking read holds the slot");
        await blocking.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => blockingRead.WaitAsync(Strategies.Patience));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => holding);
        Assert.Equal((0, 0), (disk.ActiveRequests, disk.QueuedRequests));
    }

    [Fact]
    public async Task ReadAsync_FastModel_CompletesAndReleasesItsSlot()
    {
        var disk = new NetworkDiskModel(new NetworkDiskModelOptions { RequestLatency = TimeSpan.Zero, UsefulQueueDepth = 2 });

        await Task.WhenAll(Enumerable.Range(0, 6).Select(_ => disk.ReadAsync(1000, CancellationToken.None).AsTask()));
        disk.Read(1000, CancellationToken.None);

        Assert.Equal((0, 0), (disk.ActiveRequests, disk.QueuedRequests));
    }
}
