using Indexing.Datasets;
using Indexing.Measurement;

namespace Indexing.Server.Demo;

// What `demo` was asked to do, validated by the command line. PrefetchDisk: the modelled disk the
// prefetch pass reads through; null reads the local disk as it is. IndexingThreads: the server's
// Indexes:IndexingThreads, the threads the rebuild indexes with.
internal sealed record DemoSettings(
    string DataDirectory,
    DatasetShape Shape,
    long SizeBytes,
    int Seed,
    string Strategy,
    bool DirectReads,
    RebuildDevice? PrefetchDisk,
    bool Rebuild = true,
    int Writers = 2,
    int Port = Hosting.ServerOptions.DefaultPort,
    bool ExitWhenDone = false,
    int IndexingThreads = Indexer.IndexOptions.DefaultIndexingThreads)
{
    /// <summary>
    /// The prefetch pass's modelled disk by default: a slow network volume, 4 MB/s per request
    /// stream and 4 ms per request, 16 requests at once (64 MB/s in all). Reading is the hard part
    /// there: the default 1 GiB takes about 20 s, long enough to watch the controller double L from
    /// 2 to the device's depth and settle.
    /// </summary>
    public static RebuildDevice DefaultPrefetchDisk { get; } = RebuildDevice.ModelledNetworkDisk(
        requestLatency: TimeSpan.FromMilliseconds(4), streamBandwidthBytesPerSecond: 4_000_000, usefulQueueDepth: 16);

    public string DatasetMarkerPath => Path.Combine(DataDirectory, "dataset.json");
}
