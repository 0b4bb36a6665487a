using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// What every <see cref="IDocumentReadSource"/> promises, run against each implementation: the
/// in-memory double, the modelled network disk wrapping it, and RocksDB (bare and under the model).
/// The documents are generated orders (valid JSON, so a real store accepts them) of mixed sizes,
/// read through plans that make one-document, short and long tasks.
/// </summary>
public abstract class ReadSourceContractTests : IDisposable
{
    /// <summary>Log-normal orders up to 256 KiB: mostly a few KiB, a tail above the large-document threshold below.</summary>
    private static readonly Lazy<List<(string Id, byte[] Body)>> _documents = new(() =>
        DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, documentCount: 600, seed: 5, maxDocumentBytes: 256 << 10))
            .Select(d => (d.Id, d.Utf8Json))
            .ToList());

    private protected static IReadOnlyList<(string Id, byte[] Body)> Documents => _documents.Value;

    /// <summary>Small tasks (one document or a few: Get and MultiGet in RocksDB) and large ones (range reads).</summary>
    public static TheoryData<string> Plans => ["small tasks", "large tasks"];

    /// <summary>
    /// A new source over <see cref="Documents"/> (its scan starting after <paramref name="startAfterId"/>),
    /// and the etag it gives each id.
    /// </summary>
    private protected abstract (IDocumentReadSource Source, IReadOnlyDictionary<string, long> Etags) CreateSource(string? startAfterId = null);

    /// <summary>How many times the source's underlying resource (snapshot, double) was released.</summary>
    private protected abstract int Releases { get; }

    public virtual void Dispose()
    {
    }

    [Fact]
    public void ScanMetadata_Always_ListsEveryDocumentInKeyOrderWithSizeAndEtag()
    {
        var (source, etags) = CreateSource();
        using (source)
        {
            var rows = source.ScanMetadata(CancellationToken.None).ToList();

            Assert.Equal(Documents.Select(d => d.Id), rows.Select(r => r.Id));
            Assert.Equal(Documents.Select(d => (long)d.Body.Length), rows.Select(r => r.SizeBytes));
            Assert.Equal(rows.Select(r => etags[r.Id]), rows.Select(r => r.Etag));
            Assert.All(rows.Zip(rows.Skip(1)), pair => Assert.True(DocumentIds.CompareKeyOrder(pair.First.Id, pair.Second.Id) < 0));
            Assert.True(rows.Max(r => r.Etag) <= source.SnapshotEtag, "An etag is above the snapshot's high-water mark.");
        }
    }

    [Fact]
    public void ScanMetadata_StartAfterAnId_ListsOnlyTheDocumentsAfterIt()
    {
        var (source, _) = CreateSource(startAfterId: Documents[99].Id);
        using (source)
        {
            Assert.Equal(Documents[99].Id, source.StartAfterId);
            Assert.Equal(Documents.Skip(100).Select(d => d.Id), source.ScanMetadata(CancellationToken.None).Select(r => r.Id));
        }
    }

    [Theory]
    [MemberData(nameof(Plans))]
    public void Read_EveryPlannedTask_ReturnsExactlyItsDocumentsInKeyOrderWithBodiesAndEtags(string plan)
    {
        var (source, etags) = CreateSource();
        using (source)
        {
            var tasks = Plan(source, plan);
            Assert.Contains(tasks, t => t.DocumentCount == 1);
            Assert.Contains(tasks, t => t.DocumentCount > 1);

            var delivered = tasks.SelectMany(task => ReadChecked(source, task)).ToList();

            AssertExactly(delivered, etags);
        }
    }

    [Fact]
    public void Read_FromSeveralThreadsAtOnce_EveryThreadGetsExactDocuments()
    {
        var (source, etags) = CreateSource();
        using (source)
        {
            var tasks = Plan(source, "small tasks").Concat(Plan(source, "large tasks")).ToList();
            using var start = new Barrier(4);
            var results = new List<PrefetchedDocument>[4];
            var threads = Enumerable.Range(0, 4).Select(t => new Thread(() =>
            {
                start.SignalAndWait(Strategies.Patience);

                // Each thread walks the tasks from a different point, so different tasks overlap in time.
                var offset = t * tasks.Count / 4;
                results[t] = Enumerable.Range(0, tasks.Count).SelectMany(i => ReadChecked(source, tasks[(i + offset) % tasks.Count])).ToList();
            })).ToList();
            threads.ForEach(thread => thread.Start());
            Assert.All(threads, thread => Assert.True(thread.Join(Strategies.Patience), "A reader thread did not finish."));

            Assert.All(results, result =>
            {
                Assert.Equal(2 * Documents.Count, result.Count);
                AssertExactly(result.DistinctBy(d => d.Id).OrderBy(d => d.Id, Comparer<string>.Create(DocumentIds.CompareKeyOrder)).ToList(), etags);
            });
        }
    }

    [Fact]
    public void ReadAndScan_CancelledToken_ThrowOperationCanceled()
    {
        var (source, _) = CreateSource();
        using (source)
        {
            var task = Plan(source, "large tasks").First(t => t.DocumentCount > StoreSnapshotSource.MultiGetMaxDocuments);
            using var cancelled = new CancellationTokenSource();
            cancelled.Cancel();

            Assert.ThrowsAny<OperationCanceledException>(() => source.Read(task, [], cancelled.Token));
            Assert.ThrowsAny<OperationCanceledException>(() => source.ScanMetadata(cancelled.Token).ToList());
        }
    }

    [Fact]
    public void Dispose_Twice_ReleasesOnce()
    {
        var (source, _) = CreateSource();
        var task = Plan(source, "small tasks")[0];
        ReadChecked(source, task);

        source.Dispose();
        source.Dispose();

        Assert.Equal(1, Releases);
    }

    private protected static List<ReadTask> Plan(IDocumentReadSource source, string plan)
    {
        var options = plan == "small tasks"
            ? new PlanOptions(defaultTaskBytes: 8 << 10, minTaskBytes: 1, maxTaskBytes: 8 << 10, maxDocumentsPerTask: 8, largeDocumentThresholdBytes: 64 << 10)
            : new PlanOptions(defaultTaskBytes: 1 << 20, minTaskBytes: 1, maxTaskBytes: 1 << 20, maxDocumentsPerTask: 4096, largeDocumentThresholdBytes: 64 << 10);
        return ReadPlanner.Plan(source.ScanMetadata(CancellationToken.None), options).ToList();
    }

    private static List<PrefetchedDocument> ReadChecked(IDocumentReadSource source, ReadTask task)
    {
        var documents = new List<PrefetchedDocument>();
        source.Read(task, documents, CancellationToken.None);
        Assert.Equal(task.Ids, documents.Select(d => d.Id));
        Assert.Equal(task.Etags, documents.Select(d => d.Etag));
        return documents;
    }

    private static void AssertExactly(List<PrefetchedDocument> delivered, IReadOnlyDictionary<string, long> etags)
    {
        Assert.Equal(Documents.Select(d => d.Id), delivered.Select(d => d.Id));
        for (var i = 0; i < Documents.Count; i++)
        {
            Assert.True(Documents[i].Body.AsSpan().SequenceEqual(delivered[i].Body.Span), $"The body of '{Documents[i].Id}' differs.");
            Assert.Equal(etags[Documents[i].Id], delivered[i].Etag);
        }
    }
}

/// <summary>The contract on the in-memory test double.</summary>
public sealed class InMemoryReadSourceContractTests : ReadSourceContractTests
{
    private InMemoryReadSourceDouble? _double;

    private protected override int Releases => _double!.ReleaseCount;

    private protected override (IDocumentReadSource, IReadOnlyDictionary<string, long>) CreateSource(string? startAfterId = null)
    {
        _double = new InMemoryReadSourceDouble(Documents) { StartAfterId = startAfterId };
        return (_double, EtagsOfDouble());
    }

    internal static Dictionary<string, long> EtagsOfDouble() =>
        Documents.Select((d, i) => (d.Id, Etag: InMemoryReadSourceDouble.EtagOf(i))).ToDictionary(x => x.Id, x => x.Etag);
}

/// <summary>The contract on the modelled network disk wrapping the double (a fast model, so the tests stay quick).</summary>
public sealed class ModelledDiskReadSourceContractTests : ReadSourceContractTests
{
    private InMemoryReadSourceDouble? _double;

    private protected override int Releases => _double!.ReleaseCount;

    private protected override (IDocumentReadSource, IReadOnlyDictionary<string, long>) CreateSource(string? startAfterId = null)
    {
        _double = new InMemoryReadSourceDouble(Documents) { StartAfterId = startAfterId };
        return (Strategies.OnModelledDisk(_double, FastDisk), InMemoryReadSourceContractTests.EtagsOfDouble());
    }

    internal static NetworkDiskModelOptions FastDisk { get; } =
        new() { RequestLatency = TimeSpan.FromMilliseconds(0.2), StreamBandwidthBytesPerSecond = 2_000_000_000 };
}

/// <summary>The contract on RocksDB: a store snapshot of the documents' collection, in a temp directory.</summary>
public sealed class StoreSnapshotSourceContractTests : ReadSourceContractTests
{
    private readonly TempStore _store = new();
    private readonly Dictionary<string, long> _etags;

    public StoreSnapshotSourceContractTests()
    {
        var written = _store.Store.PutMany(Documents.Select(d => new DocumentWrite(d.Id, d.Body)));
        _etags = Documents.ToDictionary(d => d.Id, d => _store.Store.GetMetadata(d.Id)!.Value.Etag);
        Assert.Equal(written.LastEtag, _etags.Values.Max());
    }

    private protected override int Releases => _store.Store.GetStatus().OpenSnapshots == 0 ? 1 : 0;

    private protected override (IDocumentReadSource, IReadOnlyDictionary<string, long>) CreateSource(string? startAfterId = null) =>
        (new StoreSnapshotSource(_store.Store.CreateSnapshot(), DatasetSpec.DefaultCollection, startAfterId), _etags);

    public override void Dispose()
    {
        try
        {
            _store.AssertNoOpenHandles();
        }
        finally
        {
            _store.Dispose();
        }
    }
}

/// <summary>The contract on the modelled network disk wrapping the RocksDB source unchanged.</summary>
public sealed class ModelledDiskOverStoreSnapshotContractTests : ReadSourceContractTests
{
    private readonly TempStore _store = new();
    private readonly Dictionary<string, long> _etags;

    public ModelledDiskOverStoreSnapshotContractTests()
    {
        _store.Store.PutMany(Documents.Select(d => new DocumentWrite(d.Id, d.Body)));
        _etags = Documents.ToDictionary(d => d.Id, d => _store.Store.GetMetadata(d.Id)!.Value.Etag);
    }

    private protected override int Releases => _store.Store.GetStatus().OpenSnapshots == 0 ? 1 : 0;

    private protected override (IDocumentReadSource, IReadOnlyDictionary<string, long>) CreateSource(string? startAfterId = null) =>
        (Strategies.OnModelledDisk(
            new StoreSnapshotSource(_store.Store.CreateSnapshot(), DatasetSpec.DefaultCollection, startAfterId),
            ModelledDiskReadSourceContractTests.FastDisk), _etags);

    public override void Dispose()
    {
        try
        {
            _store.AssertNoOpenHandles();
        }
        finally
        {
            _store.Dispose();
        }
    }
}
