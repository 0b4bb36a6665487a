using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>Generated datasets for the prefetcher's tests over a real store (<see cref="TempStore"/>).</summary>
internal static class StoreDatasets
{
    /// <summary>A dataset of a few MB: giants capped at 2 MiB so they stay giants (above the planner's 1 MiB threshold) yet small.</summary>
    public static DatasetSpec SmallSpec(DatasetShape shape, long totalBytes = 6_000_000, int seed = DatasetSpec.DefaultSeed) =>
        new(shape, targetTotalBytes: totalBytes, seed: seed, maxDocumentBytes: 2L << 20);

    /// <summary>Writes the dataset; returns its documents in key order with the etags the store gave them.</summary>
    public static List<StoredDocument> Load(this TempStore temp, DatasetSpec spec)
    {
        var generated = DatasetGenerator.Generate(spec).ToList();
        var written = temp.Store.PutMany(generated.Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
        Assert.Equal(generated.Count, written.Documents);
        return generated.Select((d, i) => new StoredDocument(d.Id, written.FirstEtag + i, d.Utf8Json)).ToList();
    }
}
