using Indexing.Datasets;

namespace Indexing.Lab.Soak;

/// <summary>What `soak` was asked to do, validated by the command line.</summary>
/// <param name="DataDirectory">Where the store and indexes live; the dataset is loaded once and reused.</param>
/// <param name="Shape">Dataset shape (only when generating).</param>
/// <param name="SizeBytes">Dataset size to generate (only when generating).</param>
/// <param name="Seed">Generator seed.</param>
/// <param name="Writers">Background writers during the rebuild and the after window.</param>
/// <param name="Port">The server's port (its admin page shows the run live); 0 picks a free one.</param>
/// <param name="DirectReads">Open the store with RocksDB's DB-wide use_direct_reads.</param>
/// <param name="After">How long live traffic runs after the rebuild, for the cache hit rate and RSS after it.</param>
/// <param name="OutputDirectory">Where scale-LABEL.csv, .svg, .json and .md go.</param>
/// <param name="Label">The run's name in those files, e.g. "10GiB-jemalloc".</param>
/// <param name="Configuration">Settings passed on to the server (e.g. --Storage:RowCacheBytes=64MiB).</param>
internal sealed record SoakSettings(
    string DataDirectory,
    DatasetShape Shape,
    long SizeBytes,
    int Seed,
    int Writers,
    int Port,
    bool DirectReads,
    TimeSpan After,
    string OutputDirectory,
    string Label,
    IReadOnlyList<string> Configuration)
{
    public string DatasetMarkerPath => Path.Combine(DataDirectory, "dataset.json");

    public string FilePath(string extension) => Path.Combine(OutputDirectory, $"scale-{Label}.{extension}");
}
