using Indexing.Datasets;

namespace Indexing.Server.Demo;

// What `demo` was asked to do, validated by the command line.
internal sealed record DemoSettings(
    string DataDirectory,
    DatasetShape Shape,
    long SizeBytes,
    int Seed,
    string Strategy,
    bool DirectReads,
    bool ModelNetworkDisk)
{
    public string StoreDirectory => Path.Combine(DataDirectory, "store");

    public string DatasetMarkerPath => Path.Combine(DataDirectory, "dataset.json");
}
