using Indexing.Prefetcher;

namespace Indexing.Measurement;

/// <summary>
/// Where the documents are read from: the store's own disk (open it with direct reads so the page
/// cache does not hide I/O), or the same store under a modelled network disk whose delays every
/// read (the rebuild's and the foreground load's) pays, through one shared model per run.
/// </summary>
public sealed record RebuildDevice
{
    private RebuildDevice(string name, NetworkDiskModelOptions? networkDisk)
    {
        Name = name;
        NetworkDisk = networkDisk;
    }

    /// <summary>The local disk, as the store was opened.</summary>
    public static RebuildDevice Local { get; } = new("local", null);

    /// <summary>Short label: "local", "network-disk", or the name given to a modelled disk.</summary>
    public string Name { get; }

    /// <summary>The modelled disk's parameters; null on the local disk.</summary>
    internal NetworkDiskModelOptions? NetworkDisk { get; }

    /// <summary>
    /// The store under the modelled network disk with these parameters (validated now), labelled
    /// <paramref name="name"/> (e.g. "slow-disk" for a read-bound one).
    /// </summary>
    internal static RebuildDevice ModelledNetworkDisk(NetworkDiskModelOptions? options = null, string name = "network-disk")
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        return new(name, (options ?? new NetworkDiskModelOptions()).Validate());
    }

    /// <summary>
    /// The store under the modelled network disk: each figure given replaces the model's default
    /// (validated now). For hosts, which cannot name the model's options.
    /// </summary>
    /// <param name="requestLatency">Fixed cost of every request.</param>
    /// <param name="streamBandwidthBytesPerSecond">Bandwidth of one request stream.</param>
    /// <param name="usefulQueueDepth">Requests serviced at once; more wait in line.</param>
    /// <param name="deviceBandwidthBytesPerSecond">Cap on the whole device's bandwidth; null for none.</param>
    /// <param name="name">The label.</param>
    public static RebuildDevice ModelledNetworkDisk(
        TimeSpan? requestLatency, long? streamBandwidthBytesPerSecond, int? usefulQueueDepth, long? deviceBandwidthBytesPerSecond = null, string name = "network-disk")
    {
        var defaults = new NetworkDiskModelOptions();
        return ModelledNetworkDisk(
            new NetworkDiskModelOptions
            {
                RequestLatency = requestLatency ?? defaults.RequestLatency,
                StreamBandwidthBytesPerSecond = streamBandwidthBytesPerSecond ?? defaults.StreamBandwidthBytesPerSecond,
                UsefulQueueDepth = usefulQueueDepth ?? defaults.UsefulQueueDepth,
                DeviceBandwidthBytesPerSecond = deviceBandwidthBytesPerSecond,
            },
            name);
    }

    /// <summary>The modelled network disk with the model's default figures.</summary>
    public static RebuildDevice DefaultNetworkDisk { get; } = ModelledNetworkDisk(options: null);

    /// <summary>
    /// The read-bound device: the modelled disk at 8 MB/s per stream and 4 ms per request (depth
    /// 16). Two streams read slower than the indexer indexes, so the controller has to leave L=2.
    /// </summary>
    public static RebuildDevice SlowDisk { get; } = ModelledNetworkDisk(
        new NetworkDiskModelOptions { StreamBandwidthBytesPerSecond = 8_000_000, RequestLatency = TimeSpan.FromMilliseconds(4) }, "slow-disk");

    /// <summary>The default modelled disk with a device-wide cap of 200 MB/s, shared by every stream (knee near 4 readers).</summary>
    public static RebuildDevice CappedDisk { get; } = ModelledNetworkDisk(
        new NetworkDiskModelOptions { DeviceBandwidthBytesPerSecond = 200_000_000 }, "capped-disk");

    /// <summary>The device a lab tool's <c>--device</c> names: local, network-disk, slow-disk or capped-disk.</summary>
    /// <exception cref="ArgumentException">No device has that name.</exception>
    public static RebuildDevice Named(string name) => name switch
    {
        "local" => Local,
        "network-disk" => DefaultNetworkDisk,
        "slow-disk" => SlowDisk,
        "capped-disk" => CappedDisk,
        _ => throw new ArgumentException($"device {MessageText.Quote(name)} is not one of local, network-disk, slow-disk, capped-disk.", nameof(name)),
    };

    /// <summary>The modelled disk's fixed cost of every request; null on the local disk.</summary>
    public TimeSpan? RequestLatency => NetworkDisk?.RequestLatency;

    /// <summary>The modelled disk's bandwidth of one request stream; null on the local disk.</summary>
    public long? StreamBandwidthBytesPerSecond => NetworkDisk?.StreamBandwidthBytesPerSecond;

    /// <summary>The modelled disk's requests serviced at once; null on the local disk.</summary>
    public int? UsefulQueueDepth => NetworkDisk?.UsefulQueueDepth;

    /// <summary>The modelled disk's cap on the whole device's bandwidth; null on the local disk or with no cap.</summary>
    public long? DeviceBandwidthBytesPerSecond => NetworkDisk?.DeviceBandwidthBytesPerSecond;

    public override string ToString() => NetworkDisk is null ? Name : $"{Name} ({NetworkDisk})";
}
