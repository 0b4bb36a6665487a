using System.Runtime.InteropServices;

using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Bodies read from RocksDB are copied into the run's pooled arrays and lent with each batch: a
/// released batch's arrays are read into again, and a body nobody released is never touched.
/// </summary>
public sealed class LentBodiesTests
{
    private const string Collection = DatasetSpec.DefaultCollection;

    // A budget of a few bodies (growing: 1-100 KiB), so arrays must come back to be read into again.
    private static readonly PrefetchOptions _options = new() { BudgetBytes = TestCollections.MiB, BaselineBatchDocuments = 16 };

    public static TheoryData<PrefetchStrategy> AllStrategies => [.. Enum.GetValues<PrefetchStrategy>()];

    [Theory]
    [MemberData(nameof(AllStrategies))]
    public async Task ReleasedBatches_ArraysAreReadIntoAgain_WhileUnreleasedBodiesStayIntactAndUnshared(PrefetchStrategy strategy)
    {
        using var temp = new TempStore();
        var expected = temp.Load(StoreDatasets.SmallSpec(DatasetShape.Growing)).ToDictionary(d => d.Id, d => d.Body);
        var held = new List<PrefetchedDocument>();
        var released = new HashSet<byte[]>(ReferenceEqualityComparer.Instance);
        var readIntoAgain = 0;
        var taken = 0;

        await using (var prefetcher = Prefetch.Start(temp.Store, Collection, strategy, _options))
        {
            var take = 0;
            while (await prefetcher.TakeAsync(8, 256 * 1024).AsTask().WaitAsync(Strategies.Patience) is { } batch)
            {
                foreach (var document in batch.Documents)
                {
                    taken++;
                    Assert.Equal(expected[document.Id], document.Body.ToArray());
                    if (Pooled(document) is { } array && released.Remove(array))
                    {
                        readIntoAgain++;
                    }
                }

                // Every other take is kept, the rest released twice (the second must do nothing).
                if (take++ % 2 == 0)
                {
                    held.AddRange(batch.Documents);
                    continue;
                }

                foreach (var document in batch.Documents)
                {
                    if (Pooled(document) is { } array)
                    {
                        released.Add(array);
                    }
                }

                batch.ReleaseBodies();
                batch.ReleaseBodies();
            }
        }

        Assert.Equal(expected.Count, taken);
        Assert.True(readIntoAgain > 10, $"only {readIntoAgain} bodies were read into a released array");
        // What nobody released is still its document, byte for byte, in an array of its own.
        Assert.All(held, document => Assert.Equal(expected[document.Id], document.Body.ToArray()));
        var heldArrays = held.Select(Pooled).OfType<byte[]>().ToList();
        Assert.True(heldArrays.Count > 10, $"only {heldArrays.Count} held bodies were in pooled arrays");
        Assert.Equal(heldArrays.Count, heldArrays.Distinct(ReferenceEqualityComparer.Instance).Count());
        temp.AssertNoOpenHandles();
    }

    // The body's array, if it is larger than the body (rounded up to a pool bucket).
    private static byte[]? Pooled(PrefetchedDocument document) =>
        MemoryMarshal.TryGetArray(document.Body, out var segment) && segment.Array!.Length > segment.Count ? segment.Array : null;
}
