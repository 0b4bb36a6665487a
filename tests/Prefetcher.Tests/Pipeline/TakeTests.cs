namespace Indexing.Prefetcher.Tests;

/// <summary>"Whatever is ready": takes merge, split and never wait while something is ready.</summary>
public sealed class TakeTests
{
    [Fact]
    public async Task TakeAsync_EverythingReady_ReturnsAllOfItWithoutWaitingForMaxDocuments()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(10, 100));
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);

        var batch = await prefetcher.TakeAsync(maxDocuments: 1000, maxBytes: 1_000_000);

        Assert.NotNull(batch);
        Assert.Equal(10, batch.Count);
        Assert.Equal(1000, batch.TotalBytes);
        Assert.False(batch.Waited);
    }

    [Fact]
    public async Task TakeAsync_SeveralReadsReady_MergesThemInOneBatch()
    {
        // 100 KiB documents, 4 MiB tasks: three reads.
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(100, 100 * TestCollections.KiB));
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);
        Assert.True(source.ReadCalls >= 2, $"The test needs several reads; there were {source.ReadCalls}.");

        var batch = await prefetcher.TakeAsync(maxDocuments: 1000, maxBytes: long.MaxValue);

        Assert.NotNull(batch);
        Assert.Equal(100, batch.Count);
        Assert.Null(await prefetcher.TakeAsync(1000, long.MaxValue));
    }

    [Fact]
    public async Task TakeAsync_ReadyExceedsLimits_SplitsAndKeepsTheRestForTheNextTake()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(100, 100));
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);

        var byCount = await prefetcher.TakeAsync(maxDocuments: 30, maxBytes: long.MaxValue);
        var byBytes = await prefetcher.TakeAsync(maxDocuments: 1000, maxBytes: 1050);
        var rest = await prefetcher.TakeAsync(maxDocuments: 1000, maxBytes: long.MaxValue);

        Assert.Equal(30, byCount!.Count);
        Assert.Equal(10, byBytes!.Count);
        Assert.Equal(1000, byBytes.TotalBytes);
        Assert.Equal(60, rest!.Count);
        var ids = byCount.Documents.Concat(byBytes.Documents).Concat(rest.Documents).Select(d => d.Id).ToList();
        Assert.Equal(Enumerable.Range(0, 100).Select(TestCollections.Id), ids);
        Assert.Null(await prefetcher.TakeAsync(1000, long.MaxValue));
    }

    [Fact]
    public async Task TakeAsync_DocumentBiggerThanMaxBytes_ReturnsItAlone()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.FromSizes([5000, 10, 10]));
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);

        var big = await prefetcher.TakeAsync(maxDocuments: 10, maxBytes: 100);
        var small = await prefetcher.TakeAsync(maxDocuments: 10, maxBytes: 100);

        Assert.Equal([TestCollections.Id(0)], big!.Documents.Select(d => d.Id));
        Assert.Equal(5000, big.TotalBytes);
        Assert.Equal(2, small!.Count);
    }

    [Fact]
    public async Task TakeAsync_TakenBytes_LeaveTheBudget()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(100, 100));
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);
        Assert.Equal(10_000, prefetcher.Admission.Snapshot().BufferedBytes);

        var batch = await prefetcher.TakeAsync(maxDocuments: 25, maxBytes: long.MaxValue);

        Assert.Equal(10_000 - batch!.TotalBytes, prefetcher.Admission.Snapshot().BufferedBytes);
        Assert.Equal(0, prefetcher.Admission.Snapshot().InFlightBytes);
    }

    [Fact]
    public async Task TakeAsync_NothingReady_WaitsAndSaysSo()
    {
        // 1,000 bytes make one task (sequence 0), held until the take is waiting, so "nothing ready"
        // does not depend on timing.
        using var firstReadMayFinish = new ManualResetEventSlim(false);
        var source = new HoldTaskSource(new InMemoryReadSourceDouble(TestCollections.Uniform(10, 100)), firstReadMayFinish);
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());

        var take = prefetcher.TakeAsync(maxDocuments: 1000, maxBytes: long.MaxValue).AsTask();
        Assert.False(take.IsCompleted);
        firstReadMayFinish.Set();
        var batch = await take.WaitAsync(Strategies.Patience);

        Assert.NotNull(batch);
        Assert.True(batch.Waited);
    }

    [Fact]
    public async Task TakeAsync_WhileAnotherTakeWaits_Throws()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(10, 100)) { ReadDelay = TimeSpan.FromSeconds(30) };
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        var waiting = prefetcher.TakeAsync(10, 1000);

        await Assert.ThrowsAsync<InvalidOperationException>(() => prefetcher.TakeAsync(10, 1000).AsTask());
        Assert.False(waiting.IsCompleted);
    }

    [Theory]
    [InlineData(0, 1)]
    [InlineData(1, 0)]
    public async Task TakeAsync_LimitBelowOne_Throws(int maxDocuments, long maxBytes)
    {
        await using var prefetcher = Strategies.StartAdaptive(new InMemoryReadSourceDouble([]), new PrefetchOptions());

        await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => prefetcher.TakeAsync(maxDocuments, maxBytes).AsTask());
    }
}
