namespace Indexing.Prefetcher.Tests;

public sealed class NetworkDiskModelClockTests
{
    private static readonly TimeSpan OneMegabyte = TimeSpan.FromTicks(186_667); // 2 ms + 1 MB at 60 MB/s

    [Fact]
    public void Submit_IdleDisk_CompletesAfterTheServiceTime()
    {
        var disk = new NetworkDiskModelClock(new NetworkDiskModelOptions());
        var at = TimeSpan.FromSeconds(3);

        Assert.Equal(at + OneMegabyte, disk.Submit(at, 1_000_000));
        Assert.Equal(at + TimeSpan.FromMilliseconds(2), disk.Submit(at, 0));
    }

    [Fact]
    public void Submit_MoreRequestsThanUsefulDepth_SeventeenthWaitsForTheFirstToFinish()
    {
        var disk = new NetworkDiskModelClock(new NetworkDiskModelOptions());
        var first = disk.Submit(TimeSpan.Zero, 500_000);
        var others = Enumerable.Range(0, 15).Select(_ => disk.Submit(TimeSpan.Zero, 1_000_000)).ToList();

        var seventeenth = disk.Submit(TimeSpan.Zero, 1_000_000);
        var eighteenth = disk.Submit(TimeSpan.Zero, 1_000_000);

        Assert.All(others, completion => Assert.Equal(OneMegabyte, completion));
        Assert.Equal(first + OneMegabyte, seventeenth);
        Assert.Equal(OneMegabyte + OneMegabyte, eighteenth);
    }

    [Fact]
    public void Submit_QueuedRequests_AreServedInSubmissionOrder()
    {
        var disk = new NetworkDiskModelClock(new NetworkDiskModelOptions { UsefulQueueDepth = 1 });

        var completions = Enumerable.Range(0, 5).Select(i => disk.Submit(TimeSpan.FromTicks(i), 1_000_000)).ToList();

        Assert.Equal(Enumerable.Range(1, 5).Select(i => i * OneMegabyte), completions);
    }

    [Fact]
    public void Submit_DeviceCap_DividesBandwidthAmongRequestsInServiceAtAdmission()
    {
        var disk = new NetworkDiskModelClock(new NetworkDiskModelOptions { DeviceBandwidthBytesPerSecond = 60_000_000 });

        var alone = disk.Submit(TimeSpan.Zero, 1_000_000);
        var shared = disk.Submit(TimeSpan.Zero, 1_000_000);

        Assert.Equal(OneMegabyte, alone);
        Assert.Equal(TimeSpan.FromMilliseconds(2) + TimeSpan.FromTicks(333_333), shared);
    }

    [Fact]
    public void OutstandingAt_CountsQueuedAndInServiceUntilCompletion()
    {
        var disk = new NetworkDiskModelClock(new NetworkDiskModelOptions { UsefulQueueDepth = 2 });
        foreach (var _ in Enumerable.Range(0, 3))
        {
            disk.Submit(TimeSpan.Zero, 1_000_000);
        }

        Assert.Equal(3, disk.OutstandingAt(TimeSpan.Zero));
        Assert.Equal(1, disk.OutstandingAt(OneMegabyte));
        Assert.Equal(0, disk.OutstandingAt(OneMegabyte * 2));
    }

    [Fact]
    public void Submit_NegativeTime_Throws()
    {
        var disk = new NetworkDiskModelClock(new NetworkDiskModelOptions());

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => disk.Submit(TimeSpan.FromTicks(-1), 1));

        Assert.Equal("submittedAt", error.ParamName);
        Assert.Equal(0, disk.OutstandingAt(TimeSpan.Zero));
    }

    [Fact]
    public void Submit_BeforeAnEarlierSubmission_Throws()
    {
        var disk = new NetworkDiskModelClock(new NetworkDiskModelOptions());
        disk.Submit(TimeSpan.FromSeconds(1), 1);

        Assert.Throws<ArgumentOutOfRangeException>(() => disk.Submit(TimeSpan.Zero, 1));
    }
}
