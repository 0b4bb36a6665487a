using System.Text;

using Indexing.Datasets;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer.Tests.Index;

// A store and an index directory in one temp directory, owned by one test and deleted on
// dispose (after every index and the store are closed). Fails the test if the store leaked a
// snapshot or an iterator.
internal sealed class IndexTestEnvironment : IDisposable
{
    /// <summary>Every field type, over the generated orders.</summary>
    public const string OrdersDefinitionJson = """
        { "name": "orders-all", "collection": "orders", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "description", "path": "description", "type": "text" },
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "tier", "path": "customer.tier", "type": "keyword" },
          { "name": "tags", "path": "tags[]", "type": "keyword" },
          { "name": "itemCount", "path": "itemCount", "type": "long", "sortable": true },
          { "name": "quantity", "path": "lines[].quantity", "type": "long" },
          { "name": "total", "path": "total", "type": "double", "sortable": true, "stored": true },
          { "name": "paid", "path": "paid", "type": "bool", "sortable": true }
        ] }
        """;

    private readonly TempDirectory _root = new("indexing-indexer-tests", create: true);
    private readonly List<DocumentIndex> _indexes = [];
    private bool _storeClosed;

    public IndexTestEnvironment(bool withStore = true)
    {
        if (withStore)
        {
            Store = DocumentStore.Open(Path.Combine(Root, "store"), TempStore.DefaultOptions);
        }
    }

    public string Root => _root.Path;

    public DocumentStore? Store { get; }

    public DocumentStore RequireStore => Store ?? throw new InvalidOperationException("this environment has no store");

    public static IndexDefinition Orders { get; } = IndexDefinition.Parse(OrdersDefinitionJson);

    public string IndexDirectory(string name = "index") => Path.Combine(Root, name);

    /// <summary>Opens an index that the environment disposes (if the test did not) before deleting the directory.</summary>
    public DocumentIndex OpenIndex(IndexDefinition? definition = null, IndexOptions? options = null, string name = "index")
    {
        var index = DocumentIndex.Open(IndexDirectory(name), definition ?? Orders, options);
        _indexes.Add(index);
        return index;
    }

    public static List<GeneratedDocument> Generate(int count, DatasetShape shape = DatasetShape.Uniform, int seed = DatasetSpec.DefaultSeed) =>
        [.. DatasetGenerator.Generate(new DatasetSpec(shape, documentCount: count, seed: seed, maxDocumentBytes: 256 << 10))];

    /// <summary>Writes the documents to the store; returns the last etag.</summary>
    public long Put(IEnumerable<GeneratedDocument> documents)
    {
        long etag = 0;
        foreach (var document in documents)
        {
            etag = RequireStore.Put(document.Id, document.Utf8Json);
        }

        return etag;
    }

    public static MemoryBatchSource Source(IEnumerable<GeneratedDocument> documents, long snapshotEtag = 1)
    {
        var etag = 0L;
        return new MemoryBatchSource([.. documents.Select(d => new PrefetchedDocument(d.Id, ++etag, d.Utf8Json))], snapshotEtag);
    }

    public static byte[] Json(string json) => Encoding.UTF8.GetBytes(json);

    /// <summary>Polls until <paramref name="condition"/> holds; fails after <paramref name="timeout"/> (a hang guard).</summary>
    public static void WaitUntil(Func<bool> condition, TimeSpan timeout, string what)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"timed out after {timeout.TotalSeconds} s waiting for {what}");
            }

            Thread.Sleep(10);
        }
    }

    /// <summary>Closes the store now (checking it leaked nothing), e.g. to make it fail under an index.</summary>
    public void CloseStore()
    {
        if (Store is not null && !_storeClosed)
        {
            var status = Store.GetStatus();
            Store.Dispose();
            _storeClosed = true;
            Assert.Equal(0, status.OpenSnapshots);
            Assert.Equal(0, status.OpenIterators);
        }
    }

    public void Dispose()
    {
        foreach (var index in _indexes)
        {
            index.Dispose();
        }

        CloseStore();
        _root.Dispose();
    }
}
