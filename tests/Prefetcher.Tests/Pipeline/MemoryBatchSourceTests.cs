using System.Text;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The in-memory source of the IndexOnly bound and the indexer tests: its totals are known from the
/// start; listed in key order, each batch says the last id it holds, as a prefetcher's batches say
/// how far they reach (so a build from it makes its bulk commits); in any other order it says nothing.
/// </summary>
public sealed class MemoryBatchSourceTests
{
    private static readonly PrefetchedDocument[] Documents =
        [.. Enumerable.Range(1, 10).Select(i => new PrefetchedDocument($"orders/{i:D4}", i, Encoding.UTF8.GetBytes(new string('x', 100 * i))))];

    [Fact]
    public async Task InKeyOrder_EachBatchSaysTheLastIdItHolds()
    {
        var source = new MemoryBatchSource(Documents, snapshotEtag: 10, inKeyOrder: true);
        Assert.Null(source.HandedOutThrough);

        var taken = new List<PrefetchedDocument>();
        while (await source.TakeAsync(maxDocuments: 3, maxBytes: 1 << 20) is { } batch)
        {
            taken.AddRange(batch.Documents);
            Assert.Equal(batch.Documents[^1].Id, batch.HandedOutThrough);
            Assert.Equal(batch.Documents[^1].Id, source.HandedOutThrough);
        }

        Assert.Equal(Documents.Select(d => d.Id), taken.Select(d => d.Id));
        Assert.Equal("orders/0010", source.HandedOutThrough);
    }

    [Fact]
    public async Task NotSaidToBeInKeyOrder_SaysNothingHandedOutThrough()
    {
        var source = new MemoryBatchSource([.. Documents.Reverse()], snapshotEtag: 10);

        while (await source.TakeAsync(maxDocuments: 3, maxBytes: 1 << 20) is { } batch)
        {
            Assert.Null(batch.HandedOutThrough);
        }

        Assert.Null(source.HandedOutThrough);
    }

    [Fact]
    public void Pressure_BeforeAnyTake_KnowsTheTotals()
    {
        var source = new MemoryBatchSource(Documents, snapshotEtag: 10, inKeyOrder: true);

        Assert.Equal(Documents.Length, source.Pressure.DocumentsTotal);
        Assert.Equal(Documents.Sum(d => d.SizeBytes), source.Pressure.BytesTotal);
        Assert.Equal(5500, source.Pressure.BytesKnown);
    }
}
