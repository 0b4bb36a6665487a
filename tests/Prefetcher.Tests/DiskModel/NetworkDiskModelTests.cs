using System.Diagnostics;

namespace Indexing.Prefetcher.Tests;

public sealed class NetworkDiskModelTests
{
    /// <summary>Far longer than any test waits: a read that returns did so because it was cancelled.</summary>
    private static readonly NetworkDiskModelOptions Slow = new() { RequestLatency = TimeSpan.FromMinutes(5) };

    /// <summary>Loose: only catches a read that ignored cancellation, never a slow machine.</summary>
    private static readonly TimeSpan Prompt = TimeSpan.FromSeconds(2);

    [Fact]
    public async Task ReadAsync_CancelledDuringServiceTime_ThrowsPromptly()
    {
        var disk = new NetworkDiskModel(Slow);
        using var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(50));
        var clock = Stopwatch.StartNew();

        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await disk.ReadAsync(1_000_000, cancel.Token));

        Assert.True(clock.Elapsed < Prompt, $"took {clock.Elapsed}");
        Assert.Equal(0, disk.ActiveRequests);
    }

    [Fact]
    public void Read_CancelledDuringServiceTime_ThrowsPromptly()
    {
        var disk = new NetworkDiskModel(Slow);
        using var cancel = new CancellationTokenSource(TimeSpan.FromMilliseconds(50));
        var clock = Stopwatch.StartNew();

        Assert.ThrowsAny<OperationCanceledException>(() => disk.Read(1_000_000, cancel.Token));

        Assert.True(clock.Elapsed < Prompt, $"took {clock.Elapsed}");
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
    public async Task ReadAsync_FastModel_CompletesAndReleasesItsSlot()
    {
        var disk = new NetworkDiskModel(new NetworkDiskModelOptions { RequestLatency = TimeSpan.Zero, UsefulQueueDepth = 2 });

        await Task.WhenAll(Enumerable.Range(0, 6).Select(_ => disk.ReadAsync(1000, CancellationToken.None).AsTask()));
        disk.Read(1000, CancellationToken.None);

        Assert.Equal((0, 0), (disk.ActiveRequests, disk.QueuedRequests));
    }
}
