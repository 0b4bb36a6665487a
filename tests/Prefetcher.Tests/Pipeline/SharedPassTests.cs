using System.Text;
using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// <see cref="SharedPass"/>: one read of a collection fanned out to several readers. Every reader gets
/// every document once, in the source's order, from its own key; the source is read once; a batch's
/// bytes stay in the budget until the last reader took it; joining follows the window and the key.
/// </summary>
public sealed class SharedPassTests
{
    private const string Collection = DatasetSpec.DefaultCollection;

    private static readonly TimeSpan _longWindow = TimeSpan.FromMinutes(1);

    [Fact]
    public async Task Readers_OneSourceRead_EachGetsEveryDocumentOnceInOrder()
    {
        var documents = Documents(500);
        var source = new DisposalCountingSource(new MemoryBatchSource(documents, snapshotEtag: 500, inKeyOrder: true));
        var pass = new SharedPass(source, _longWindow);
        Assert.True(pass.TryJoin(null, "a", out var a));
        Assert.True(pass.TryJoin(null, "b", out var b));

        // Interleaved takes of different sizes: the log serves whichever is behind.
        var readA = new List<string>();
        var readB = new List<string>();
        while (await a.TakeAsync(7, 1 << 20) is { } batchA)
        {
            readA.AddRange(batchA.Documents.Select(d => d.Id));
            if (await b.TakeAsync(3, 1 << 20) is { } batchB)
            {
                readB.AddRange(batchB.Documents.Select(d => d.Id));
            }
        }

        while (await b.TakeAsync(50, 1 << 20) is { } batchB)
        {
            readB.AddRange(batchB.Documents.Select(d => d.Id));
        }

        var expected = documents.Select(d => d.Id).ToList();
        Assert.Equal(expected, readA);
        Assert.Equal(expected, readB);
        Assert.Equal(expected[^1], a.HandedOutThrough);
        Assert.Equal(expected[^1], b.HandedOutThrough);
        Assert.Equal(500, source.Inner.Taken);
        Assert.Equal(["a", "b"], pass.Readers);
        Assert.Equal(["a", "b"], a.Pressure.SharedBy);
        Assert.Equal(500, a.Pressure.DocumentsDone);

        await a.DisposeAsync();
        Assert.Equal(0, source.Disposals);
        Assert.False(pass.Ended.IsCompleted);
        await b.DisposeAsync();
        Assert.Equal(1, source.Disposals);
        await pass.Ended.WaitAsync(Strategies.Patience);
    }

    [Fact]
    public async Task Reader_WithALaterKey_GetsOnlyTheDocumentsAfterIt_AndNeverReportsLess()
    {
        var documents = Documents(200);
        var key = documents[119].Id;
        var pass = new SharedPass(new MemoryBatchSource(documents, snapshotEtag: 200, inKeyOrder: true), _longWindow);
        Assert.True(pass.TryJoin(null, "fresh", out var fresh));
        Assert.True(pass.TryJoin(key, "resumed", out var resumed));
        Assert.Equal(key, resumed.HandedOutThrough);

        var read = new List<string>();
        while (await resumed.TakeAsync(16, 1 << 20) is { } batch)
        {
            Assert.True(DocumentIds.CompareKeyOrder(batch.HandedOutThrough, key) >= 0, $"the reader reported {batch.HandedOutThrough}, before its key {key}");
            read.AddRange(batch.Documents.Select(d => d.Id));
        }

        Assert.Equal(documents.Skip(120).Select(d => d.Id), read);
        Assert.Equal(80, resumed.Pressure.DocumentsDone);
        Assert.Equal(80, resumed.Pressure.DocumentsTotal);
        await resumed.DisposeAsync();
        await fresh.DisposeAsync();
    }

    [Fact]
    public async Task TryJoin_InTheWindow_GetsTheWholePass_AfterItOrBeforeTheStart_Refused()
    {
        var documents = Documents(100);
        var pass = new SharedPass(new MemoryBatchSource(documents, snapshotEtag: 100, inKeyOrder: true), TimeSpan.FromSeconds(3));
        Assert.True(pass.TryJoin(null, "first", out var first));
        var taken = 0;
        while (taken < 60 && await first.TakeAsync(10, 1 << 20) is { } batch)
        {
            taken += batch.Count;
        }

        // Late in the window: the log still holds the pass from its start.
        Assert.True(pass.TryJoin(null, "late", out var late));
        var readLate = new List<string>();
        while (await late.TakeAsync(1000, 1 << 30) is { } batch)
        {
            readLate.AddRange(batch.Documents.Select(d => d.Id));
        }

        Assert.Equal(documents.Select(d => d.Id), readLate);

        await WaitUntil(() => pass.Closed);
        Assert.False(pass.TryJoin(null, "after the window", out _));
        await first.DisposeAsync();
        await late.DisposeAsync();
        await pass.Ended.WaitAsync(Strategies.Patience);

        var resumedPass = new SharedPass(new StartingAfter(new MemoryBatchSource(documents.Skip(50).ToList(), snapshotEtag: 100, inKeyOrder: true), documents[49].Id), _longWindow);
        Assert.Equal(documents[49].Id, resumedPass.StartAfterId);
        Assert.True(resumedPass.TryJoin(documents[49].Id, "resumed", out var resumed));
        Assert.False(resumedPass.TryJoin(null, "fresh, before the pass's start", out _));
        Assert.False(resumedPass.TryJoin(documents[10].Id, "resumed earlier", out _));
        Assert.True(resumedPass.TryJoin(documents[70].Id, "resumed later", out var later));
        await resumed.DisposeAsync();
        await later.DisposeAsync();
        Assert.False(resumedPass.TryJoin(documents[70].Id, "after everyone left", out _));
    }

    // Over the adaptive prefetcher and a real store: what the fast reader took stays in the budget
    // until the slow one took it too, and the fast one stops a budget ahead.
    [Fact]
    public async Task Budget_HoldsABatchUntilTheLastReaderTookIt()
    {
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 3_000_000));
        var options = new PrefetchOptions { BudgetBytes = 256 << 10 };
        var shared = (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, options);
        var pass = new SharedPass(shared, TimeSpan.FromMilliseconds(500));
        Assert.True(pass.TryJoin(null, "fast", out var fast));
        Assert.True(pass.TryJoin(null, "slow", out var slow));

        // The fast reader takes until the budget is full of what the slow one has not taken.
        long takenByFast = 0;
        using (var stop = new CancellationTokenSource(TimeSpan.FromSeconds(3)))
        {
            try
            {
                while (await fast.TakeAsync(64, 64 << 10, stop.Token) is { } batch)
                {
                    takenByFast += batch.TotalBytes;
                    Assert.True(shared.Admission.Snapshot().BufferedBytes >= takenByFast, "a batch the slow reader has not taken left the budget");
                }
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                // It waits: the budget holds what the slow reader has not taken.
            }
        }

        Assert.InRange(takenByFast, 1, expected.Sum(d => (long)d.Body.Length) - 1);
        Assert.InRange(takenByFast, 1, options.BudgetBytes + (2L << 20));

        // The slow reader takes everything; the fast one goes on; the two got the same documents.
        var slowIds = new List<string>();
        var fastIds = new List<string>();
        var slowTask = Task.Run(async () =>
        {
            while (await slow.TakeAsync(64, 64 << 10) is { } batch)
            {
                slowIds.AddRange(batch.Documents.Select(d => d.Id));
            }
        });
        while (await fast.TakeAsync(64, 64 << 10) is { } batch)
        {
            fastIds.AddRange(batch.Documents.Select(d => d.Id));
        }

        await slowTask.WaitAsync(Strategies.Patience);
        // The adaptive prefetcher hands reads out as they complete, not in key order.
        Assert.Equal(expected.Select(d => d.Id).Order(StringComparer.Ordinal), slowIds.Order(StringComparer.Ordinal));
        Assert.Equal(expected.Count, fast.Pressure.DocumentsDone);
        Assert.Equal(0, shared.Admission.Snapshot().BufferedBytes);
        Assert.True(shared.Admission.Snapshot().HighWaterMarkBytes <= options.BudgetBytes + (2L << 20));

        await fast.DisposeAsync();
        await slow.DisposeAsync();
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public async Task Leave_ASlowReaderThatLeaves_ReturnsWhatItHeld()
    {
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 2_000_000));
        var shared = (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 256 << 10 });
        var pass = new SharedPass(shared, TimeSpan.FromMilliseconds(200));
        Assert.True(pass.TryJoin(null, "stays", out var stays));
        Assert.True(pass.TryJoin(null, "leaves", out var leaves));
        Assert.NotNull(await leaves.TakeAsync(1, 1 << 20));
        await leaves.DisposeAsync();
        Assert.Equal(["stays"], pass.Readers);

        var read = 0;
        while (await stays.TakeAsync(256, 1 << 20) is { } batch)
        {
            read += batch.Count;
        }

        Assert.Equal(expected.Count, read);
        Assert.Equal(0, shared.Admission.Snapshot().BufferedBytes);
        await stays.DisposeAsync();
        await pass.Ended.WaitAsync(Strategies.Patience);
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public async Task Failure_ReachesEveryReader_AfterWhatWasReadBefore()
    {
        var documents = Documents(30);
        var pass = new SharedPass(new FailingAfter(new MemoryBatchSource(documents, snapshotEtag: 30, inKeyOrder: true), takes: 3), _longWindow);
        Assert.True(pass.TryJoin(null, "a", out var a));
        Assert.True(pass.TryJoin(null, "b", out var b));
        foreach (var reader in new[] { a, b })
        {
            var read = 0;
            var failure = await Assert.ThrowsAsync<InvalidDataException>(async () =>
            {
                while (await reader.TakeAsync(5, 1 << 20) is { } batch)
                {
                    read += batch.Count;
                }
            });
            Assert.Equal(15, read);
            Assert.Contains("the source broke", failure.Message);
        }

        Assert.False(pass.TryJoin(null, "after the failure", out _));
        await a.DisposeAsync();
        await b.DisposeAsync();
    }

    private static List<PrefetchedDocument> Documents(int count) =>
        [.. Enumerable.Range(1, count).Select(i => new PrefetchedDocument($"{Collection}/{i:D6}", i, Encoding.UTF8.GetBytes($$"""{"n":{{i}}}""")))];

    private static async Task WaitUntil(Func<bool> condition)
    {
        using var patience = new CancellationTokenSource(Strategies.Patience);
        while (!condition())
        {
            await Task.Delay(20, patience.Token);
        }
    }

    private sealed class DisposalCountingSource(MemoryBatchSource inner) : IBatchSource
    {
        private int _disposals;

        public MemoryBatchSource Inner => inner;

        public int Disposals => Volatile.Read(ref _disposals);

        public PrefetchPressure Pressure => inner.Pressure;

        public long SnapshotEtag => inner.SnapshotEtag;

        public string? HandedOutThrough => inner.HandedOutThrough;

        public PrefetchPipeline? Pipeline => inner.Pipeline;

        public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
            inner.TakeAsync(maxDocuments, maxBytes, cancellationToken);

        public ValueTask DisposeAsync()
        {
            Interlocked.Increment(ref _disposals);
            return inner.DisposeAsync();
        }
    }

    // A source that starts after a key, as a resumed prefetch does (Prefetch.Start's startAfterId).
    private sealed class StartingAfter(IBatchSource inner, string key) : IBatchSource
    {
        public PrefetchPressure Pressure => inner.Pressure;

        public long SnapshotEtag => inner.SnapshotEtag;

        public string? HandedOutThrough => inner.HandedOutThrough ?? key;

        public PrefetchPipeline? Pipeline => inner.Pipeline;

        public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
            inner.TakeAsync(maxDocuments, maxBytes, cancellationToken);

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }

    private sealed class FailingAfter(IBatchSource inner, int takes) : IBatchSource
    {
        private int _taken;

        public PrefetchPressure Pressure => inner.Pressure;

        public long SnapshotEtag => inner.SnapshotEtag;

        public string? HandedOutThrough => inner.HandedOutThrough;

        public PrefetchPipeline? Pipeline => inner.Pipeline;

        public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
            ++_taken > takes ? throw new InvalidDataException("the source broke") : inner.TakeAsync(maxDocuments, maxBytes, cancellationToken);

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
