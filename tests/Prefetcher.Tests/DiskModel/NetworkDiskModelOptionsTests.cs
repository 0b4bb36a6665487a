using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher.Tests;

public sealed class NetworkDiskModelOptionsTests
{
    [Theory]
    // 2 ms + 1,000,000 B / 60,000,000 B/s = 2 ms + 16.667 ms.
    [InlineData(1_000_000L, 186_667L)]
    // 2 ms + 16,666.667 s: bytes x ticks per second is 10^19, past long.MaxValue.
    [InlineData(1_000_000_000_000L, 166_666_686_667L)]
    public void ServiceTime_OnDefaults_IsLatencyPlusTransfer(long bytes, long expectedTicks)
    {
        var options = new NetworkDiskModelOptions();

        Assert.Equal(TimeSpan.FromTicks(expectedTicks), options.ServiceTime(bytes, activeRequests: 1));
    }

    [Fact]
    public void ServiceTime_DeviceCapSharedByActiveRequests_SlowsEachStream()
    {
        var options = new NetworkDiskModelOptions { DeviceBandwidthBytesPerSecond = 240_000_000 };

        // 8 active: 240 / 8 = 30 MB/s each, below the 60 MB/s stream: 2 ms + 33.333 ms.
        Assert.Equal(TimeSpan.FromTicks(353_333), options.ServiceTime(1_000_000, activeRequests: 8));
        // 2 active: 120 MB/s share, the stream's 60 MB/s binds.
        Assert.Equal(options.ServiceTime(1_000_000, 1), options.ServiceTime(1_000_000, activeRequests: 2));
    }

    [Fact]
    public void ServiceTime_BeyondTimeSpanRange_ThrowsOverflow()
    {
        var options = new NetworkDiskModelOptions { StreamBandwidthBytesPerSecond = 1 };

        Assert.Throws<OverflowException>(() => options.ServiceTime(long.MaxValue, activeRequests: 1));
    }

    [Fact]
    public void Validate_InvalidSettings_NamesEveryOne()
    {
        var options = new NetworkDiskModelOptions { UsefulQueueDepth = 0, StreamBandwidthBytesPerSecond = 0, DeviceBandwidthBytesPerSecond = -1 };

        var error = Assert.Throws<OptionsValidationException>(() => new NetworkDiskModelClock(options));

        Assert.Contains("UsefulQueueDepth", error.Message);
        Assert.Contains("StreamBandwidthBytesPerSecond", error.Message);
        Assert.Contains("DeviceBandwidthBytesPerSecond", error.Message);
    }

    [Fact]
    public void ToString_StatesEveryParameter()
    {
        Assert.Equal(
            "network disk model: 2.0 ms per request, 60 MB/s per stream, useful queue depth 16, no device cap",
            new NetworkDiskModelOptions().ToString());
        Assert.EndsWith(
            "useful queue depth 4, device cap 250 MB/s",
            new NetworkDiskModelOptions { UsefulQueueDepth = 4, DeviceBandwidthBytesPerSecond = 250_000_000 }.ToString());
    }
}
