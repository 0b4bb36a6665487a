using System.Text;
using Indexing.Datasets;
using Indexing.Storage;

using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The prefetcher over real RocksDB (a store in a temp directory per test), through the public
/// <see cref="Prefetch.Start"/>: every shape and strategy delivers exactly the snapshot, later
/// writes stay out, cancellation releases the snapshot and every iterator, a failure names its range.
/// </summary>
public sealed class RocksDbPrefetchTests
{
    private const string Collection = DatasetSpec.DefaultCollection;

    private static readonly PrefetchOptions _options = new() { BudgetBytes = 16 * TestCollections.MiB, BaselineBatchDocuments = 256 };

    public static TheoryData<DatasetShape, string> ShapesAndStrategies()
    {
        var data = new TheoryData<DatasetShape, string>();
        foreach (var shape in Enum.GetValues<DatasetShape>())
        {
            foreach (var strategy in PrefetchStrategyNames.All)
            {
                data.Add(shape, strategy);
            }
        }

        return data;
    }

    // By name: the strategy type is internal to the engine, and a test method's parameters must be public.
    public static TheoryData<string> AllStrategies => [.. PrefetchStrategyNames.All];

    [Theory]
    [MemberData(nameof(ShapesAndStrategies))]
    public async Task ReadAll_EachShapeAndStrategy_DeliversExactlyTheSnapshotsDocuments(DatasetShape shape, string strategyName)
    {
        var strategy = PrefetchStrategyNames.Parse(strategyName);
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(shape));
        temp.Store.Put("other/1", """{"not":"in the collection"}""");

        var prefetcher = Prefetch.Start(temp.Store, Collection, strategy, _options);
        var received = await Strategies.DrainWithPatienceAsync(prefetcher);

        AssertSame(expected, received);
        Assert.Equal(temp.Store.LastEtag, prefetcher.SnapshotEtag);
        Assert.Equal(expected[^1].Id, prefetcher.HandedOutThrough);
        await prefetcher.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);
        temp.AssertNoOpenHandles();
    }

    [Theory]
    [MemberData(nameof(AllStrategies))]
    public async Task ReadAll_WritesAfterTheSnapshot_AreNotDelivered(string strategyName)
    {
        var strategy = PrefetchStrategyNames.Parse(strategyName);
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 2_000_000));
        await using var prefetcher = Prefetch.Start(temp.Store, Collection, strategy, _options);

        // After the snapshot: a new document, a changed one, a deleted one.
        temp.Store.Put($"{Collection}/99999999", """{"added":"after the snapshot"}""");
        temp.Store.Put(expected[10].Id, """{"changed":"after the snapshot"}""");
        Assert.NotNull(temp.Store.Delete(expected[20].Id));
        var received = await Strategies.DrainWithPatienceAsync(prefetcher);

        AssertSame(expected, received);
        Assert.True(temp.Store.LastEtag > prefetcher.SnapshotEtag);
        Assert.Equal(3, temp.Store.ReadChanges(prefetcher.SnapshotEtag).Count());
    }

    [Theory]
    [MemberData(nameof(AllStrategies))]
    public async Task ReadAll_StartAfterTheWatermark_DeliversTheRestOnly(string strategyName)
    {
        var strategy = PrefetchStrategyNames.Parse(strategyName);
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Growing, totalBytes: 2_000_000));
        var resumeAfter = expected[expected.Count / 3].Id;

        await using var prefetcher = Prefetch.Start(temp.Store, Collection, strategy, _options, startAfterId: resumeAfter);
        var received = await Strategies.DrainWithPatienceAsync(prefetcher);

        AssertSame(expected.Skip((expected.Count / 3) + 1).ToList(), received);
    }

    [Theory]
    [MemberData(nameof(AllStrategies))]
    public async Task Cancel_MidRun_ReleasesTheSnapshotAndEveryIterator(string strategyName)
    {
        var strategy = PrefetchStrategyNames.Parse(strategyName);
        using var temp = new TempStore();
        temp.Load(StoreDatasets.SmallSpec(DatasetShape.LogNormal));
        using var cancellation = new CancellationTokenSource();

        // A slow modelled disk, so reads are still going when the token fires.
        var slowDisk = new NetworkDiskModel(new NetworkDiskModelOptions { RequestLatency = TimeSpan.FromMilliseconds(50), StreamBandwidthBytesPerSecond = 20_000_000 });
        var prefetcher = Prefetch.Start(temp.Store, Collection, strategy, _options with { BudgetBytes = 2 * TestCollections.MiB }, slowDisk, cancellationToken: cancellation.Token);
        await prefetcher.TakeAsync(10, TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);
        var running = temp.Store.GetStatus();
        Assert.Equal(1, running.OpenSnapshots);

        cancellation.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => Strategies.DrainWithPatienceAsync(prefetcher));
        await prefetcher.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);

        Assert.Equal(PrefetchState.Cancelled, prefetcher.Pressure.State);
        temp.AssertNoOpenHandles();
    }

    [Theory]
    [MemberData(nameof(AllStrategies))]
    public async Task ReadAll_StoreDisposedBeforeARead_FailureNamesTheTasksKeyRange(string strategyName)
    {
        var strategy = PrefetchStrategyNames.Parse(strategyName);
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 2_000_000));

        // The last task is cut only after the metadata scan ended, so only its read meets the closed store.
        ReadTask? failed = null;
        var source = new StoreSnapshotSource(temp.Store.CreateSnapshot(), Collection, startAfterId: null)
        {
            BeforeStoreCall = task =>
            {
                if (task.LastId == expected[^1].Id)
                {
                    failed = task;
                    temp.Store.Dispose();
                }
            },
        };
        await using var prefetcher = Strategies.Start(Strategies.Name(strategy), source, _options, batchDocuments: 256);

        var error = await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.NotNull(failed);
        Assert.Equal(failed.FirstId, error.FirstId);
        Assert.Equal(expected[^1].Id, error.LastId);
        Assert.Contains($"'{failed.FirstId}'..'{expected[^1].Id}'", error.Message, StringComparison.Ordinal);
        Assert.IsType<ObjectDisposedException>(error.InnerException);
        Assert.Equal(PrefetchState.Failed, prefetcher.Pressure.State);
    }

    [Fact]
    public async Task Start_Adaptive_WatchesTheStoresForegroundReadsByDefault()
    {
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 2_000_000));

        // A slow modelled disk keeps the run going for several ticks while the store serves Gets.
        var slowDisk = new NetworkDiskModel(new NetworkDiskModelOptions { RequestLatency = TimeSpan.FromMilliseconds(100), StreamBandwidthBytesPerSecond = 2_000_000 });
        await using var prefetcher = Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, _options with { BudgetBytes = TestCollections.MiB }, slowDisk);
        await Strategies.EventuallyAsync(
            () =>
            {
                for (var i = 0; i < 20; i++)
                {
                    Assert.NotNull(temp.Store.Get(expected[i].Id));
                }

                return prefetcher.Pressure.ForegroundP99 is not null;
            },
            "the pressure view shows the store's foreground p99");

        Assert.True(prefetcher.Pressure.ForegroundP99 > TimeSpan.Zero);
    }

    [Fact]
    public void Start_BadCollectionOrStartKey_ThrowsNamingTheValueAndOpensNothing()
    {
        using var temp = new TempStore();
        temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 100_000));

        var nested = Assert.Throws<ArgumentException>(() => Prefetch.Start(temp.Store, "orders/x", PrefetchStrategy.Adaptive));
        Assert.Contains("'orders/x'", nested.Message, StringComparison.Ordinal);
        Assert.Contains("no '/'", nested.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentException>(() => Prefetch.Start(temp.Store, "", PrefetchStrategy.Sequential));

        var elsewhere = Assert.Throws<ArgumentException>(() => Prefetch.Start(temp.Store, Collection, PrefetchStrategy.FixedBatch, startAfterId: "users/7"));
        Assert.Contains("'users/7'", elsewhere.Message, StringComparison.Ordinal);
        Assert.Contains("'orders'", elsewhere.Message, StringComparison.Ordinal);

        var strategy = Assert.Throws<ArgumentOutOfRangeException>(() => Prefetch.Start(temp.Store, Collection, (PrefetchStrategy)7));
        Assert.Contains("7", strategy.Message, StringComparison.Ordinal);

        var options = Assert.Throws<OptionsValidationException>(() => Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 0 }));
        Assert.Contains("BudgetBytes", options.Message, StringComparison.Ordinal);
        temp.AssertNoOpenHandles();
    }

    private static void AssertSame(List<StoredDocument> expected, List<PrefetchedDocument> received)
    {
        Assert.Equal(expected.Count, received.Count);
        var byId = received.ToDictionary(d => d.Id);
        Assert.Equal(expected.Count, byId.Count);
        foreach (var document in expected)
        {
            Assert.True(byId.TryGetValue(document.Id, out var delivered), $"'{document.Id}' was not delivered.");
            Assert.Equal(document.Etag, delivered.Etag);
            Assert.True(document.Body.AsSpan().SequenceEqual(delivered.Body.Span), $"The body of '{document.Id}' differs from the snapshot's.");
        }
    }

    internal static byte[] JsonOfSize(long bytes)
    {
        const string Head = "{\"blob\":\"";
        const string Tail = "\"}";
        return Encoding.UTF8.GetBytes(Head + new string('x', (int)bytes - Head.Length - Tail.Length) + Tail);
    }
}
