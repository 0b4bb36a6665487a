using System.Collections.Concurrent;
using BenchmarkDotNet.Attributes;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Measurement;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// The rebuild benchmarks' common setup: the store for a shape and size is generated and loaded
/// once per process into a temp directory (REBUILD_BENCH_DIR, else the system's temp directory) and
/// reused by every strategy, bound, device and benchmark class (same snapshot contents for all);
/// the runs go through the measurement engine (<see cref="RebuildWorkload"/>). Stores live until
/// the process exits: BenchmarkDotNet runs these benchmarks in process (see <see cref="RebuildConfig"/>),
/// and loading hundreds of MB per benchmark case would dwarf the runs.
/// </summary>
public abstract class RebuildBenchmarkBase
{
    private static readonly ConcurrentDictionary<(DatasetShape, long), Lazy<LoadedStore>> _stores = new();

    /// <summary>Text, keyword and numeric fields over the generated orders.</summary>
    public static IndexDefinition Orders { get; } = IndexDefinition.Parse($$"""
        { "name": "orders-bench", "collection": "{{DatasetSpec.DefaultCollection}}", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "description", "path": "description", "type": "text" },
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "tags", "path": "tags[]", "type": "keyword" },
          { "name": "total", "path": "total", "type": "double", "sortable": true },
          { "name": "itemCount", "path": "itemCount", "type": "long", "sortable": true }
        ] }
        """);

    protected RebuildWorkload Workload { get; private set; } = null!;

    protected abstract RebuildCase CurrentCase { get; }

    /// <summary>The index rebuilt (default <see cref="Orders"/>).</summary>
    protected virtual IndexDefinition Definition => Orders;

    /// <summary>The indexer's options (default: the product's own).</summary>
    protected virtual IndexOptions IndexOptions => new();

    /// <summary>
    /// The L at which <see cref="RunPinned"/> runs an Adaptive rebuild pinned from the first tick
    /// (the controller's part taken out), loaded beside the main workload; null (the default) for none.
    /// </summary>
    protected virtual int? PinnedConcurrency => null;

    private RebuildWorkload? _pinned;

    // The benchmark class's own name: the in-process toolchain runs a type it emits deriving from
    // it, so GetType() alone would name the emitted type.
    private string TableName
    {
        get
        {
            var type = GetType();
            while (type.BaseType is { } parent && parent != typeof(RebuildBenchmarkBase))
            {
                type = parent;
            }

            return type.Name;
        }
    }

    [GlobalSetup]
    public void LoadStore()
    {
        var loaded = _stores.GetOrAdd((CurrentCase.Shape, CurrentCase.TargetBytes), key => new Lazy<LoadedStore>(() => LoadedStore.Create(key.Item1, key.Item2))).Value;
        Workload = loaded.Workload(Definition, IndexOptions);
        // The collection's size (and, within the in-memory limit, IndexOnly's copy and the
        // foreground ids) are read before any timing.
        Workload.LoadIntoMemoryAsync().GetAwaiter().GetResult();
        if (PinnedConcurrency is { } pinned)
        {
            // It runs only Adaptive: the smallest in-memory limit keeps its load to the metadata scan,
            // where the default held a second copy of the bodies beside the main workload's (256 MB
            // for every case of the rebuild table, in every run's peak RSS).
            var controller = new ControllerOptions { InitialConcurrency = pinned, MaxConcurrency = pinned, FixedConcurrency = pinned };
            _pinned = loaded.Workload(Definition, IndexOptions, new PrefetchOptions { Controller = controller }, inMemoryLimitBytes: 1);
            _pinned.LoadIntoMemoryAsync().GetAwaiter().GetResult();
        }
    }

    protected RebuildFigures Run(RebuildMode mode, int foregroundReaders = 0) => Run(Workload, mode, mode.ToString(), foregroundReaders);

    /// <summary>An Adaptive rebuild with L pinned at <see cref="PinnedConcurrency"/>, recorded as <paramref name="name"/> (the benchmark method's).</summary>
    protected RebuildFigures RunPinned(string name) =>
        Run(_pinned ?? throw new InvalidOperationException($"{TableName} sets no {nameof(PinnedConcurrency)}."), RebuildMode.Adaptive, name, foregroundReaders: 0);

    /// <summary>Writes the median run (by wall time) of each named benchmark (a mode's name, or a pinned run's) of this case: its timeline as CSV and SVG, its decisions as text.</summary>
    protected void WriteMedianRuns(params string[] names)
    {
        foreach (var name in names)
        {
            var runs = RebuildResults.Get(TableName, CurrentCase.ToString(), name);
            if (runs.Count == 0)
            {
                continue;
            }

            var run = runs.OrderBy(r => r.Elapsed).ElementAt((runs.Count - 1) / 2);
            RebuildResults.WriteRun(TableName, CurrentCase, run, name, $"{name} of {CurrentCase}, median of {runs.Count} ({CurrentCase.Device})");
        }
    }

    private RebuildFigures Run(RebuildWorkload workload, RebuildMode mode, string name, int foregroundReaders)
    {
        var figures = workload.RunAsync(mode, CurrentCase.Device, foregroundReaders, TimeSpan.FromSeconds(3)).WaitAsync(TimeSpan.FromMinutes(20)).GetAwaiter().GetResult();
        if (figures.Documents != workload.Documents)
        {
            throw new InvalidOperationException($"{name} on {CurrentCase} handed over {figures.Documents} documents; the store holds {workload.Documents}.");
        }

        RebuildResults.Add(TableName, CurrentCase, name, figures);
        return figures;
    }

    /// <summary>
    /// A generated shape in a new store at <paramref name="storePath"/>, as every rebuild benchmark
    /// reads it: loaded with buffered writes, then closed and reopened with direct reads so the
    /// rebuilds read SST files from the disk (reopening flushes the memtables replayed from the log)
    /// rather than from memtables or the page cache, once its compactions are done (the load's
    /// compactions would read and write beside the first runs). Compacted is false when they were
    /// still running after 5 minutes; the caller owns the store.
    /// </summary>
    internal static (DocumentStore Store, bool Compacted) LoadStore(DatasetShape shape, long targetBytes, string storePath)
    {
        using (var writing = DocumentStore.Open(storePath, new StoreOptions(syncWrites: false)))
        {
            writing.PutMany(DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: targetBytes)).Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
        }

        var store = DocumentStore.Open(storePath, new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, directReads: true));
        return (store, store.WaitForCompactionsAsync(TimeSpan.FromMinutes(5)).GetAwaiter().GetResult());
    }

    // A generated shape in a store of its own (LoadStore), kept open with its workloads until the process exits.
    private sealed class LoadedStore
    {
        private readonly ConcurrentDictionary<(IndexDefinition, IndexOptions, PrefetchOptions?, long), RebuildWorkload> _workloads = new();

        private LoadedStore(string root, DocumentStore store)
        {
            Root = root;
            Store = store;
            AppDomain.CurrentDomain.ProcessExit += (_, _) => Dispose();
        }

        public string Root { get; }

        public DocumentStore Store { get; }

        public RebuildWorkload Workload(IndexDefinition definition, IndexOptions indexOptions, PrefetchOptions? prefetchOptions = null, long inMemoryLimitBytes = RebuildWorkload.DefaultInMemoryLimitBytes) =>
            _workloads.GetOrAdd(
                (definition, indexOptions, prefetchOptions, inMemoryLimitBytes),
                key => new RebuildWorkload(Store, key.Item1, Path.Combine(Root, "indexes"), key.Item2, key.Item3) { InMemoryLimitBytes = key.Item4 });

        public static LoadedStore Create(DatasetShape shape, long targetBytes)
        {
            var parent = Environment.GetEnvironmentVariable("REBUILD_BENCH_DIR") is { Length: > 0 } configured ? configured : Path.GetTempPath();
            var root = Path.Combine(parent, "indexing-rebuild-bench", $"{shape.ToName()}-{targetBytes / 1_000_000}MB-{Guid.NewGuid():N}");
            var (store, compacted) = LoadStore(shape, targetBytes, Path.Combine(root, "store"));
            if (!compacted)
            {
                Console.WriteLine($"// {shape.ToName()} {targetBytes / 1_000_000} MB: RocksDB still compacting after 5 minutes; the first runs share the disk with it.");
            }

            return new LoadedStore(root, store);
        }

        private void Dispose()
        {
            Store.Dispose();
            Directory.Delete(Root, recursive: true);
        }
    }
}
