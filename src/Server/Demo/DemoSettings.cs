using Indexing.Datasets;
using Indexing.Prefetcher;

namespace Indexing.Server.Demo;

// What `demo` was asked to do, validated by the command line.
internal sealed record DemoSettings(
    string DataDirectory,
    DatasetShape Shape,
    long SizeBytes,
    int Seed,
    PrefetchStrategy Strategy,
    bool DirectReads,
    bool ModelNetworkDisk,
    bool Rebuild = true,
    int Writers = 2,
    int Port = Hosting.ServerOptions.DefaultPort,
    bool ExitWhenDone = false)
{
    public string DatasetMarkerPath => Path.Combine(DataDirectory, "dataset.json");
}
