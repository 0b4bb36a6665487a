namespace Indexing.Prefetcher.Tests;

/// <summary>A large document is read apart, never holds small ones back, and fits even when bigger than the budget.</summary>
[Collection(TimingSensitive.Name)]
public sealed class LargeDocumentTests
{
    private const int SmallBefore = 200;
    private const int SmallAfter = 20_000;

    [Fact]
    public async Task ReadAll_GiantBeingRead_SmallDocumentsPlannedAfterItArriveBeforeIt()
    {
        // 2 KiB documents around one 50 MB document at docs/000200: on the modelled disk the giant
        // takes ~0.8 s to read, in which another stream reads tens of MB of small documents.
        var sizes = Enumerable.Repeat(2 * TestCollections.KiB, SmallBefore + 1 + SmallAfter).ToArray();
        sizes[SmallBefore] = 50_000_000;
        var giantId = TestCollections.Id(SmallBefore);
        long sequence = 0;
        long giantReadAt = 0;
        var source = new ObservedSource(
            Strategies.OnModelledDisk(new InMemoryReadSourceDouble(TestCollections.FromSizes(sizes))),
            task =>
            {
                if (task.FirstId == giantId)
                {
                    Volatile.Write(ref giantReadAt, Interlocked.Increment(ref sequence));
                }
            });
        await using var prefetcher = AdaptivePrefetcher.Start(source, new PrefetchOptions());

        // The consumer runs on the thread pool, away from the test framework's few threads.
        var received = await Task.Run(async () =>
        {
            var ids = new List<(string Id, long At)>();
            await foreach (var batch in prefetcher.ReadAllAsync(512, 4 * TestCollections.MiB).ConfigureAwait(false))
            {
                foreach (var document in batch.Documents)
                {
                    ids.Add((document.Id, Interlocked.Increment(ref sequence)));
                }
            }

            return ids;
        }).WaitAsync(Strategies.Patience);

        Assert.Equal(sizes.Length, received.Count);
        var giantCompleted = Volatile.Read(ref giantReadAt);
        Assert.True(giantCompleted > 0, "The giant's read was observed.");
        var overtaking = received.Count(r => string.CompareOrdinal(r.Id, giantId) > 0 && r.At < giantCompleted);
        Assert.True(overtaking >= 2000, $"Only {overtaking} small documents planned after the giant arrived before its read completed.");
    }

    [Fact]
    public async Task ReadAll_DocumentBiggerThanBudget_IsDeliveredAlone()
    {
        const long Budget = TestCollections.MiB;
        var sizes = Enumerable.Repeat(10 * TestCollections.KiB, 101).ToArray();
        sizes[50] = 3 * TestCollections.MiB;
        var source = new InMemoryReadSourceDouble(TestCollections.FromSizes(sizes));
        await using var prefetcher = AdaptivePrefetcher.Start(source, new PrefetchOptions { BudgetBytes = Budget });

        var batches = new List<PrefetchBatch>();
        await foreach (var batch in prefetcher.ReadAllAsync(1000, 8 * TestCollections.MiB).WithCancellation(CancellationToken.None))
        {
            batches.Add(batch);
        }

        Assert.Equal(101, batches.Sum(b => b.Count));
        var withGiant = Assert.Single(batches, b => b.Documents.Any(d => d.Id == TestCollections.Id(50)));
        Assert.Equal(1, withGiant.Count);
        var pressure = prefetcher.Pressure;
        Assert.Equal(3 * TestCollections.MiB, pressure.LargestOversizedAdmissionBytes);
        Assert.InRange(pressure.HighWaterMarkBytes, 1, Budget);
    }

    /// <summary>Passes reads through and reports each completed one (on the reader thread).</summary>
    private sealed class ObservedSource(IDocumentReadSource inner, Action<ReadTask> readCompleted) : IDocumentReadSource
    {
        public long SnapshotEtag => inner.SnapshotEtag;

        public IEnumerable<DocumentMeta> ScanMetadata(CancellationToken cancellationToken) => inner.ScanMetadata(cancellationToken);

        public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
        {
            inner.Read(task, destination, cancellationToken);
            readCompleted(task);
        }

        public void Dispose() => inner.Dispose();
    }
}
