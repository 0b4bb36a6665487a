using Indexing.Datasets;
using Indexing.Indexer.Tests.Index;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer.Tests.SideBySide;

// A store with generated orders and an index manager root, in one temp directory owned by one test.
internal sealed class ManagerEnvironment : IDisposable
{
    public const string V1Json = """
        { "name": "orders", "collection": "orders", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "total", "path": "total", "type": "double", "sortable": true }
        ] }
        """;

    // V1 plus two fields: a changed definition, so its hash differs.
    public const string V2Json = """
        { "name": "orders", "collection": "orders", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "total", "path": "total", "type": "double", "sortable": true },
          { "name": "itemCount", "path": "itemCount", "type": "long", "sortable": true },
          { "name": "paid", "path": "paid", "type": "bool" }
        ] }
        """;

    private readonly TempDirectory _root = new("indexing-rebuild-tests", create: true);
    private IndexManager? _manager;

    public ManagerEnvironment(int documents = 2000, DatasetShape shape = DatasetShape.LogNormal)
    {
        Store = OpenStore(StoreDirectory);
        if (documents > 0)
        {
            Store.PutMany(DatasetGenerator.Generate(new DatasetSpec(shape, documentCount: documents, maxDocumentBytes: 512 << 10))
                .Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
        }
    }

    public static IndexDefinition V1 { get; } = IndexDefinition.Parse(V1Json);

    public static IndexDefinition V2 { get; } = IndexDefinition.Parse(V2Json);

    /// <summary>The definition <paramref name="json"/> (V1Json or V2Json) under another index name, over the same collection.</summary>
    public static IndexDefinition Named(string json, string name) =>
        IndexDefinition.Parse(json.Replace("\"name\": \"orders\"", $"\"name\": \"{name}\"", StringComparison.Ordinal));

    public string Root => _root.Path;

    public string StoreDirectory => Path.Combine(Root, "store");

    public string IndexRoot => Path.Combine(Root, "indexes");

    public DocumentStore Store { get; private set; }

    public IndexManager Manager => _manager ?? throw new InvalidOperationException("open the manager first");

    // The tombstone purger runs often, so every manager test also runs with tombstones being purged
    // below the manager's watermark.
    public static DocumentStore OpenStore(string directory) =>
        DocumentStore.Open(directory, new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, tombstonePurgeInterval: TimeSpan.FromMilliseconds(20)));

    public static IndexManagerOptions FastOptions(Action<string, RebuildPoint>? hook = null) => new()
    {
        Index = new IndexOptions { RefreshInterval = TimeSpan.FromMilliseconds(100), FollowPollInterval = TimeSpan.FromMilliseconds(20), SwapLagEtags = 50 },
        RebuildHook = hook,
    };

    /// <summary>The bulk phase's source, as the server's: the adaptive prefetcher, with a small budget.</summary>
    public static IBatchSource AdaptiveSource(BulkSourceRequest request, CancellationToken cancellationToken) =>
        Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 8 << 20 }, startAfterId: request.StartAfterId, cancellationToken: cancellationToken);

    public IndexManager OpenManager(IndexManagerOptions? options = null, IRebuildObserver? observer = null, BulkSourceFactory? bulkSources = null)
    {
        _manager = IndexManager.Open(IndexRoot, Store, bulkSources ?? AdaptiveSource, options ?? FastOptions(), observer);
        return _manager;
    }

    public async Task CloseManagerAsync()
    {
        if (_manager is not null)
        {
            await _manager.DisposeAsync();
            _manager = null;
        }
    }

    /// <summary>
    /// Builds V1 (generation 1), then closes the manager and the store for the crash host, and writes
    /// V2's definition to a file for it; returns that file's path.
    /// </summary>
    public async Task<string> BuildV1ForTheCrashHostAsync()
    {
        var manager = OpenManager();
        manager.CreateOrUpdate(V1);
        await WaitForRebuildAsync(manager, "orders");
        await CloseManagerAsync();
        Store.Dispose();
        var definitionFile = Path.Combine(Root, "v2.json");
        await File.WriteAllTextAsync(definitionFile, V2Json);
        return definitionFile;
    }

    /// <summary>
    /// Builds an index of each name with V1 (over the orders, at once), closes the manager and the store,
    /// and writes each name's V2 to a file for the crash host; returns the files in the order of the names.
    /// </summary>
    public async Task<string[]> BuildV1ForTheCrashHostAsync(params string[] names)
    {
        var manager = OpenManager();
        foreach (var name in names)
        {
            manager.CreateOrUpdate(Named(V1Json, name));
        }

        foreach (var name in names)
        {
            await WaitForRebuildAsync(manager, name);
        }

        await CloseManagerAsync();
        Store.Dispose();
        var files = names.Select(name => Path.Combine(Root, $"v2-{name}.json")).ToArray();
        foreach (var (name, file) in names.Zip(files))
        {
            await File.WriteAllTextAsync(file, Named(V2Json, name).ToJson());
        }

        return files;
    }

    // After a child process had the store: open it again in this process.
    public void ReopenStoreAfterClose()
    {
        Store.Dispose();
        Store = OpenStore(StoreDirectory);
    }

    /// <summary>Copies the store's files to <paramref name="destination"/> (a backup), closing the store meanwhile.</summary>
    public void CopyStoreTo(string destination)
    {
        Store.Dispose();
        CopyDirectory(StoreDirectory, destination);
        Store = OpenStore(StoreDirectory);
    }

    /// <summary>Replaces the store with the copy in <paramref name="backup"/> (a restore), closing it meanwhile.</summary>
    public void RestoreStoreFrom(string backup)
    {
        Store.Dispose();
        Directory.Delete(StoreDirectory, recursive: true);
        CopyDirectory(backup, StoreDirectory);
        Store = OpenStore(StoreDirectory);
    }

    /// <summary>Each named index was rebuilt once, with its V2: generation 2 alone on disk, and verify finds it equal to the store.</summary>
    public void AssertRebuiltWithV2(IndexManager manager, params string[] names)
    {
        foreach (var name in names)
        {
            var summary = manager.GetSummary(name);
            Assert.Equal(2, summary.Generation);
            Assert.Equal(Named(V2Json, name).DefinitionHash, summary.DefinitionHash);
            Assert.Equal(["g000002"], GenerationDirectories(name));
            var report = manager.Verify(name);
            Assert.True(report.IsConsistent, $"{name}: {report}");
            Assert.Equal(LiveDocuments(), report.IndexDocuments);
        }
    }

    public long LiveDocuments() => Store.ScanMetadata("orders").LongCount();

    public string[] GenerationDirectories(string name) =>
        Directory.Exists(Path.Combine(IndexRoot, name)) ? [.. Directory.GetDirectories(Path.Combine(IndexRoot, name)).Select(Path.GetFileName).Order()!] : [];

    public static async Task<RebuildProgress> WaitForRebuildAsync(IndexManager manager, string name)
    {
        var progress = await manager.WaitForRebuildAsync(name).WaitAsync(TimeSpan.FromMinutes(2));
        Assert.NotNull(progress);
        return progress;
    }

    /// <summary>
    /// Builds V1, calls <paramref name="startFailing"/>, rebuilds to V2 and asserts that the rebuild
    /// failed saying <paramref name="error"/> while generation 1 alone serves all <paramref name="documents"/>.
    /// </summary>
    public async Task AssertFailedRebuildKeepsTheOldGenerationAsync(IndexManager manager, Action startFailing, string error, long documents)
    {
        manager.CreateOrUpdate(V1);
        await WaitForRebuildAsync(manager, "orders");
        startFailing();

        manager.CreateOrUpdate(V2);
        var failed = await WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Failed, failed.Phase);
        Assert.Contains(error, failed.Error, StringComparison.Ordinal);
        Assert.Equal(1, manager.GetSummary("orders").Generation);
        Assert.Equal(["g000001"], GenerationDirectories("orders"));
        Assert.Equal(documents, manager.Query("orders", new IndexQuery("*:*") { Take = 1 }).TotalHits);
    }

    private static void CopyDirectory(string from, string to)
    {
        Directory.CreateDirectory(to);
        foreach (var file in Directory.GetFiles(from))
        {
            File.Copy(file, Path.Combine(to, Path.GetFileName(file)));
        }

        foreach (var directory in Directory.GetDirectories(from))
        {
            CopyDirectory(directory, Path.Combine(to, Path.GetFileName(directory)));
        }
    }

    public void Dispose()
    {
        _manager?.DisposeAsync().AsTask().GetAwaiter().GetResult();
        Store.Dispose();
        _root.Dispose();
    }
}
