using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// A real RocksDB document store in its own temp directory, deleted on dispose. Writes skip the
/// fsync (tests do not crash the machine) and the block cache is small.
/// </summary>
internal sealed class TempDocumentStore : IDisposable
{
    public TempDocumentStore(StoreOptions? options = null)
    {
        Directory = Path.Combine(Path.GetTempPath(), "indexing-prefetch-tests", Guid.NewGuid().ToString("N"));
        Store = DocumentStore.Open(Directory, options ?? new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20));
    }

    public string Directory { get; }

    public DocumentStore Store { get; }

    /// <summary>A dataset of a few MB: giants capped at 2 MiB so they stay giants (above the planner's 1 MiB threshold) yet small.</summary>
    public static DatasetSpec SmallSpec(DatasetShape shape, long totalBytes = 6_000_000, int seed = DatasetSpec.DefaultSeed) =>
        new(shape, targetTotalBytes: totalBytes, seed: seed, maxDocumentBytes: 2L << 20);

    /// <summary>Writes the dataset; returns its documents in key order with the etags the store gave them.</summary>
    public List<StoredDocument> Load(DatasetSpec spec)
    {
        var generated = DatasetGenerator.Generate(spec).ToList();
        var written = Store.PutMany(generated.Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
        Assert.Equal(generated.Count, written.Documents);
        return generated.Select((d, i) => new StoredDocument(d.Id, written.FirstEtag + i, d.Utf8Json)).ToList();
    }

    /// <summary>Fails the test if a snapshot or iterator is still open.</summary>
    public void AssertNoOpenHandles()
    {
        var status = Store.GetStatus();
        Assert.True(status.OpenSnapshots == 0, $"{status.OpenSnapshots} snapshots are still open.");
        Assert.True(status.OpenIterators == 0, $"{status.OpenIterators} iterators are still open.");
    }

    public void Dispose()
    {
        Store.Dispose();
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: a leftover temp directory must not fail the test that made it.
        }
    }
}
