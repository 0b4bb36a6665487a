namespace Indexing.Prefetcher.Tests;

public sealed class ReadTaskSizerTests
{
    private const long MiB = 1024 * 1024;
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(250);

    [Fact]
    public void TargetBytes_NothingMeasured_IsTheInitialSize()
    {
        var sizer = new ReadTaskSizer(new ControllerOptions());

        Assert.Equal(4 * MiB, sizer.TargetBytes(TimeSpan.Zero, 2, 1024 * MiB));
    }

    [Theory]
    [InlineData(60e6, 4_500_000)]
    [InlineData(1e6, 256 * 1024)]
    [InlineData(2e9, 64 * 1024 * 1024)]
    public void TargetBytes_MeasuredStream_Is75MillisecondsOfItWithinBounds(double perStreamBytesPerSecond, long expected)
    {
        var sizer = new ReadTaskSizer(new ControllerOptions());
        sizer.Observe(Tick, (long)(perStreamBytesPerSecond * 4 * Tick.TotalSeconds), Tick, concurrency: 4);

        Assert.Equal(expected, sizer.TargetBytes(Tick, 4, 100_000 * MiB), tolerance: 1);
    }

    [Fact]
    public void TargetBytes_SmallBudget_KeepsAllTasksWithinHalfOfIt()
    {
        var sizer = new ReadTaskSizer(new ControllerOptions());
        sizer.Observe(Tick, 30_000_000, Tick, concurrency: 2);

        Assert.Equal(2 * MiB, sizer.TargetBytes(Tick, 2, 8 * MiB));
    }

    [Fact]
    public void TargetBytes_AppLimitedTicks_DoNotShrinkTasks()
    {
        var sizer = new ReadTaskSizer(new ControllerOptions());
        sizer.Observe(Tick, 30_000_000, Tick, concurrency: 2);
        var full = sizer.TargetBytes(Tick, 2, 1024 * MiB);

        sizer.Observe(2 * Tick, 1_000_000, Tick, concurrency: 2);

        Assert.Equal(full, sizer.TargetBytes(2 * Tick, 2, 1024 * MiB));
    }
}
