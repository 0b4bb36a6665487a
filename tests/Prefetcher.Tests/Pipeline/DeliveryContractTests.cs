using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// What every strategy promises, over every size shape, reading through the modelled network disk:
/// each document exactly once with its exact body, the budget respected, everything released.
/// </summary>
public sealed class DeliveryContractTests
{
    private const int DocumentCount = 2000;
    private const long BudgetBytes = 16 * TestCollections.MiB;

    public static TheoryData<string, string> StrategiesAndShapes()
    {
        var data = new TheoryData<string, string>();
        foreach (var strategy in Strategies.All)
        {
            foreach (var shape in SizeShapes.All)
            {
                data.Add(strategy, shape);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(StrategiesAndShapes))]
    public async Task ReadAll_EachShape_DeliversEveryDocumentOnceWithItsBody(string strategy, string shape)
    {
        var documents = TestCollections.Shaped(shape, DocumentCount);
        var source = new InMemoryReadSourceDouble(documents);
        var prefetcher = Strategies.Start(strategy, Strategies.OnModelledDisk(source), new PrefetchOptions { BudgetBytes = BudgetBytes });

        var received = await Strategies.DrainWithPatienceAsync(prefetcher);

        Assert.Equal(documents.Count, received.Count);
        var byId = received.ToDictionary(d => d.Id);
        Assert.Equal(documents.Count, byId.Count);
        foreach (var (id, body) in documents)
        {
            Assert.True(byId.TryGetValue(id, out var delivered), $"'{id}' was not delivered.");
            Assert.True(body.AsSpan().SequenceEqual(delivered.Body.Span), $"The body of '{id}' differs from the source's.");
        }

        await prefetcher.DisposeAsync();
        Assert.Equal(1, source.DisposeCount);
        Assert.Equal(0, source.OpenReads);
        Assert.Equal(0, source.ReadsAfterDispose);
    }

    [Theory]
    [MemberData(nameof(StrategiesAndShapes))]
    public async Task ReadAll_EachShape_BudgetHighWaterMarkStaysWithinBudget(string strategy, string shape)
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Shaped(shape, DocumentCount, seed: 11));
        await using var prefetcher = Strategies.Start(strategy, source, new PrefetchOptions { BudgetBytes = BudgetBytes });

        await Strategies.DrainWithPatienceAsync(prefetcher);

        var pressure = prefetcher.Pressure;
        Assert.InRange(pressure.HighWaterMarkBytes, 1, BudgetBytes);
        Assert.Equal(0, pressure.InFlightBytes);
        Assert.Equal(0, pressure.BufferedBytes);
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task ReadAll_Completed_PressureTotalsAddUp(string strategy)
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Shaped(SizeShapes.LogNormal, DocumentCount));
        await using var prefetcher = Strategies.Start(strategy, Strategies.OnModelledDisk(source));

        await Strategies.DrainWithPatienceAsync(prefetcher);

        var pressure = prefetcher.Pressure;
        Assert.Equal(PrefetchState.Completed, pressure.State);
        Assert.Equal(strategy, pressure.Strategy);
        Assert.True(pressure.PlanComplete);
        Assert.Equal(source.Count, pressure.DocumentsPlanned);
        Assert.Equal(source.Count, pressure.DocumentsRead);
        Assert.Equal(source.Count, pressure.DocumentsDone);
        Assert.Equal(source.TotalBytes, pressure.BytesPlanned);
        Assert.Equal(source.TotalBytes, pressure.BytesRead);
        Assert.Equal(source.TotalBytes, pressure.BytesDone);
        Assert.Equal(0, pressure.DocumentsRemaining);
        Assert.Equal(0, pressure.BytesRemaining);
        Assert.Equal(0, pressure.QueuedBatches);
        Assert.NotEmpty(pressure.History);
        Assert.True(pressure.StallCount >= 1, "The first take finds nothing ready, so at least one take stalled.");
        Assert.True(pressure.ConsumerWaitTime > TimeSpan.Zero);
        Assert.True(pressure.MeanConcurrencyLimit >= 1);
        Assert.NotNull(pressure.ReadLatencyPerMiBP50);
        Assert.True(pressure.ReadLatencyPerMiBP99 >= pressure.ReadLatencyPerMiBP50);
        Assert.True(pressure.DocumentSizeMaxBytes >= pressure.DocumentSizeP99Bytes);
        Assert.Equal(source.SnapshotEtag, prefetcher.SnapshotEtag);
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task TakeAsync_AfterTheEnd_KeepsReturningNull(string strategy)
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(10, 100));
        await using var prefetcher = Strategies.Start(strategy, source);

        await Strategies.DrainWithPatienceAsync(prefetcher);

        Assert.Null(await prefetcher.TakeAsync(10, 1000));
        Assert.Null(await prefetcher.TakeAsync(10, 1000));
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task TakeAsync_EmptySource_ReturnsNullAndReleasesTheSource(string strategy)
    {
        var source = new InMemoryReadSourceDouble([]);
        await using var prefetcher = Strategies.Start(strategy, source);

        Assert.Null(await prefetcher.TakeAsync(10, 1000).AsTask().WaitAsync(Strategies.Patience));

        Assert.Equal(1, source.DisposeCount);
        Assert.Equal(PrefetchState.Completed, prefetcher.Pressure.State);
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task SnapshotEtag_AfterTheLastBatch_IsKnownThoughTheSourceWasReleased(string strategy)
    {
        // The change feed continues from the etag once the last batch is taken; by then the source is disposed.
        var source = new DisposedEtagThrowsSource(new InMemoryReadSourceDouble(TestCollections.Uniform(10, 100)));
        await using var prefetcher = Strategies.Start(strategy, source);
        await Strategies.DrainWithPatienceAsync(prefetcher);

        Assert.True(source.IsDisposed);
        Assert.Equal(InMemoryReadSourceDouble.EtagOf(9), prefetcher.SnapshotEtag);
    }

    /// <summary>A source that, like a real snapshot, cannot answer anything once released.</summary>
    private sealed class DisposedEtagThrowsSource(InMemoryReadSourceDouble inner) : IDocumentReadSource
    {
        private int _disposed;

        public bool IsDisposed => Volatile.Read(ref _disposed) != 0;

        public long SnapshotEtag
        {
            get
            {
                ObjectDisposedException.ThrowIf(IsDisposed, this);
                return inner.SnapshotEtag;
            }
        }

        public string? StartAfterId => inner.StartAfterId;

        public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken) => inner.ScanMetadata(cancellationToken);

        public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken) =>
            inner.Read(task, destination, cancellationToken);

        public void Dispose()
        {
            Volatile.Write(ref _disposed, 1);
            inner.Dispose();
        }
    }
}
