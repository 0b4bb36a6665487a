using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher;

/// <summary>
/// Parameters of the modelled network-attached cloud disk (<see cref="NetworkDiskModel"/> and its
/// virtual-time twin in the tests), whose delays local disks and the page cache would hide.
/// </summary>
internal sealed record NetworkDiskModelOptions
{
    /// <summary>Fixed cost of every request (2 ms: a network round trip plus the device).</summary>
    public TimeSpan RequestLatency { get; init; } = TimeSpan.FromMilliseconds(2);

    /// <summary>Bandwidth of one request stream (60 MB/s, decimal, as cloud disks are quoted).</summary>
    public long StreamBandwidthBytesPerSecond { get; init; } = 60_000_000;

    /// <summary>At most this many requests are serviced at once; more wait FIFO, so their latency inflates.</summary>
    public int UsefulQueueDepth { get; init; } = 16;

    /// <summary>Optional whole-device cap shared by the requests in service; null = none.</summary>
    public long? DeviceBandwidthBytesPerSecond { get; init; }

    /// <summary>Runs <see cref="NetworkDiskModelOptionsValidator"/>: throws <see cref="OptionsValidationException"/> naming every invalid setting; returns this.</summary>
    public NetworkDiskModelOptions Validate() => OptionProblems.ThrowIfInvalid(new NetworkDiskModelOptionsValidator(), this);

    /// <summary>
    /// Time one request holds its slot: RequestLatency + bytes / min(stream, device / active). The
    /// device share is fixed at admission, as exact sharing would reschedule every completion.
    /// </summary>
    internal TimeSpan ServiceTime(long bytes, int activeRequests)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(activeRequests, 1);
        double bandwidth = StreamBandwidthBytesPerSecond;
        if (DeviceBandwidthBytesPerSecond is { } device)
        {
            bandwidth = Math.Min(bandwidth, (double)device / activeRequests);
        }
        // In double: bytes x ticks per second passes long.MaxValue from about 922 GB; a time past
        // TimeSpan's range throws OverflowException rather than wrapping.
        var transferTicks = Math.Round(bytes * (double)TimeSpan.TicksPerSecond / bandwidth);
        return RequestLatency + TimeSpan.FromTicks(checked((long)transferTicks));
    }

    public override string ToString()
    {
        var device = DeviceBandwidthBytesPerSecond is { } cap ? $"device cap {ControlText.Rate(cap)}" : "no device cap";
        return $"network disk model: {ControlText.Duration(RequestLatency)} per request, " +
            $"{ControlText.Rate(StreamBandwidthBytesPerSecond)} per stream, useful queue depth {UsefulQueueDepth}, {device}";
    }
}

/// <summary>The rules of <see cref="NetworkDiskModelOptions"/>.</summary>
internal sealed class NetworkDiskModelOptionsValidator : IValidateOptions<NetworkDiskModelOptions>
{
    public ValidateOptionsResult Validate(string? name, NetworkDiskModelOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems(nameof(NetworkDiskModelOptions) + ".");
        problems.Require(options.RequestLatency >= TimeSpan.Zero, $"{nameof(options.RequestLatency)} must not be negative (was {options.RequestLatency})");
        problems.Require(options.StreamBandwidthBytesPerSecond > 0, $"{nameof(options.StreamBandwidthBytesPerSecond)} must be positive");
        problems.InRange(options.UsefulQueueDepth, 1, 4096, nameof(options.UsefulQueueDepth));
        problems.Require(options.DeviceBandwidthBytesPerSecond is null or > 0, $"{nameof(options.DeviceBandwidthBytesPerSecond)} must be positive when set");
        return problems.Result;
    }
}
