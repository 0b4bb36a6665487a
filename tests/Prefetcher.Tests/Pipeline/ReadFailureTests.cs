using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>A failed read reaches the consumer as one PrefetchReadException naming the range; nothing hangs or vanishes.</summary>
public sealed class ReadFailureTests
{
    private static readonly string _failingId = TestCollections.Id(500);

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task ReadAll_SourceThrows_ConsumerGetsPrefetchReadExceptionNamingTheRange(string strategy)
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(1000, TestCollections.KiB))
        {
            FailWhen = task => Contains(task, _failingId) ? new IOException("disk on fire") : null,
        };
        await using var prefetcher = Strategies.Start(strategy, source);

        var failure = await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.IsType<IOException>(failure.InnerException);
        Assert.StartsWith($"reading documents '{failure.FirstId}'..'{failure.LastId}' (", failure.Message);
        Assert.EndsWith("failed: disk on fire", failure.Message);
        Assert.True(string.CompareOrdinal(failure.FirstId, _failingId) <= 0 && string.CompareOrdinal(_failingId, failure.LastId) <= 0);
        var again = await Assert.ThrowsAsync<PrefetchReadException>(() => prefetcher.TakeAsync(10, 1000).AsTask().WaitAsync(Strategies.Patience));
        Assert.Same(failure, again);
        Assert.Equal(1, source.DisposeCount);
        Assert.Equal(PrefetchState.Failed, prefetcher.Pressure.State);
        Assert.Equal(failure.Message, prefetcher.Pressure.Failure);
    }

    [Fact]
    public async Task TakeAsync_AfterAFailureRepeatedly_RethrowsTheSameStackTrace()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(1000, TestCollections.KiB))
        {
            FailWhen = task => Contains(task, _failingId) ? new IOException("disk on fire") : null,
        };
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        var second = (await Assert.ThrowsAsync<PrefetchReadException>(() => prefetcher.TakeAsync(10, 1000).AsTask())).StackTrace;
        var third = (await Assert.ThrowsAsync<PrefetchReadException>(() => prefetcher.TakeAsync(10, 1000).AsTask())).StackTrace;

        Assert.Equal(second, third);
    }

    [Fact]
    public async Task ReadAll_SourceThrows_DocumentsReadBeforeAreDeliveredFirst()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(1000, TestCollections.KiB))
        {
            FailWhen = task => Contains(task, _failingId) ? new IOException("disk on fire") : null,
        };
        await using var prefetcher = Strategies.Start(Strategies.Sequential, source, new PrefetchOptions(), batchDocuments: 100);
        var received = new List<string>();

        await Assert.ThrowsAsync<PrefetchReadException>(async () =>
        {
            await foreach (var batch in prefetcher.ReadAllAsync(1000, long.MaxValue))
            {
                received.AddRange(batch.Documents.Select(d => d.Id));
            }
        });

        Assert.Equal(Enumerable.Range(0, 500).Select(TestCollections.Id), received);
    }

    [Fact]
    public async Task ReadAll_ScanThrows_PrefetchReadExceptionSaysWhereTheScanWas()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(1000, TestCollections.KiB))
        {
            ScanFailure = new IOException("meta column family unreadable"),
            ScanFailsAfter = 10,
        };
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());

        var failure = await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.StartsWith("scanning document metadata ", failure.Message);
        Assert.EndsWith("failed: meta column family unreadable", failure.Message);
        Assert.IsType<IOException>(failure.InnerException);
        Assert.Equal(1, source.DisposeCount);
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task ReadAll_SourceThrowsItsOwnOperationCanceled_ConsumerGetsPrefetchReadException(string strategy)
    {
        // The run was not cancelled: an OCE from the source (its own timeout) is a read failure, not "you were cancelled".
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(1000, TestCollections.KiB))
        {
            FailWhen = task => Contains(task, _failingId) ? new OperationCanceledException("internal read timeout") : null,
        };
        await using var prefetcher = Strategies.Start(strategy, source);

        var failure = await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.IsType<OperationCanceledException>(failure.InnerException);
        Assert.EndsWith("failed: internal read timeout", failure.Message);
        Assert.Equal(PrefetchState.Failed, prefetcher.Pressure.State);
    }

    [Fact]
    public async Task ReadAll_ScanThrowsItsOwnOperationCanceled_ConsumerGetsPrefetchReadException()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(1000, TestCollections.KiB))
        {
            ScanFailure = new OperationCanceledException("internal scan timeout"),
            ScanFailsAfter = 10,
        };
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());

        var failure = await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.StartsWith("scanning document metadata ", failure.Message);
        Assert.IsType<OperationCanceledException>(failure.InnerException);
    }

    [Fact]
    public async Task ReadAll_SourceDropsADocument_FailsInsteadOfLosingIt()
    {
        var source = new DroppingSource(new InMemoryReadSourceDouble(TestCollections.Uniform(100, TestCollections.KiB)));
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());

        var failure = await Assert.ThrowsAsync<PrefetchReadException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.Contains("the source returned 99 documents for a task of 100", failure.Message);
        Assert.IsType<InvalidOperationException>(failure.InnerException);
    }

    [Fact]
    public async Task ReadAll_SourceThrowsOutOfMemory_ReachesTheConsumerUnwrapped()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(100, TestCollections.KiB))
        {
            FailWhen = _ => new OutOfMemoryException("test: no memory"),
        };
        await using var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());

        await Assert.ThrowsAsync<OutOfMemoryException>(() => Strategies.DrainWithPatienceAsync(prefetcher));
    }

    [Fact]
    public void ForTask_Range_MessageNamesRangeCountAndSize()
    {
        var ids = Enumerable.Range(100, 100).Select(i => $"orders/{i:D4}").ToArray();
        var task = new ReadTask(3, ids[0], ids[^1], ids.Length, 412 * 1024, IsLargeDocument: false, TargetBytes: 512 * 1024, [.. ids], [.. ids.Select((_, i) => 10L + i)]);

        var failure = PrefetchReadException.ForTask(task, new IOException("boom"));

        Assert.Equal("reading documents 'orders/0100'..'orders/0199' (100 documents, 412 KiB) failed: boom", failure.Message);
        Assert.Equal("orders/0100", failure.FirstId);
        Assert.Equal("orders/0199", failure.LastId);
    }

    private static bool Contains(ReadTask task, string id) =>
        string.CompareOrdinal(task.FirstId, id) <= 0 && string.CompareOrdinal(id, task.LastId) <= 0;

    /// <summary>A broken source: returns every document of a task but the last.</summary>
    private sealed class DroppingSource(IDocumentReadSource inner) : IDocumentReadSource
    {
        public long SnapshotEtag => inner.SnapshotEtag;

        public string? StartAfterId => inner.StartAfterId;

        public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken) => inner.ScanMetadata(cancellationToken);

        public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
        {
            inner.Read(task, destination, cancellationToken);
            destination.RemoveAt(destination.Count - 1);
        }

        public void Dispose() => inner.Dispose();
    }
}
