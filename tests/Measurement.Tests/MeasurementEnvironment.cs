using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Storage;

namespace Indexing.Measurement.Tests;

// A temp directory holding a store of generated orders (reopened with direct reads, as the
// benchmarks do) and the workload's index directory; disposing closes the store and deletes it all.
internal sealed class MeasurementEnvironment : IDisposable
{
    private readonly TempDirectory _root = new("indexing-measurement-tests");

    public static readonly IndexDefinition Orders = IndexDefinition.Parse($$"""
        { "name": "orders-measure", "collection": "{{DatasetSpec.DefaultCollection}}", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "status", "path": "status", "type": "keyword" },
          { "name": "total", "path": "total", "type": "double" }
        ] }
        """);

    public MeasurementEnvironment(DatasetShape shape, long targetBytes)
        : this(DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: targetBytes)).Select(d => new DocumentWrite(d.Id, d.Utf8Json)))
    {
    }

    // A store of the given documents (for cases a generated shape does not lay out).
    public MeasurementEnvironment(IEnumerable<DocumentWrite> documents)
    {
        var storePath = Path.Combine(Root, "store");
        using (var writing = DocumentStore.Open(storePath, new StoreOptions(syncWrites: false)))
        {
            Written = writing.PutMany(documents);
        }

        Store = DocumentStore.Open(storePath, new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, directReads: true));
        Workload = new RebuildWorkload(Store, Orders, IndexesDirectory);
    }

    public string Root => _root.Path;

    public string IndexesDirectory => Path.Combine(Root, "indexes");

    public BulkWriteResult Written { get; }

    public DocumentStore Store { get; }

    public RebuildWorkload Workload { get; }

    public void AssertNoOpenHandles()
    {
        var status = Store.GetStatus();
        Assert.Equal(0, status.OpenSnapshots);
        Assert.Equal(0, status.OpenIterators);
    }

    public void Dispose()
    {
        Store.Dispose();
        _root.Dispose();
    }
}
