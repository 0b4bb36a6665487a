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

    public override string ToString() => NetworkDisk is null ? Name : $"{Name} ({NetworkDisk})";
}
