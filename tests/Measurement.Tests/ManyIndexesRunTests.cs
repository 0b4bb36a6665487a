using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Measurement.Tests;

// The many-indexes measurement over a small store: what the figures say about reads is exact (the
// prefetches' own byte counts), so it is asserted here; the times are the lab's (many-indexes.cs).
public sealed class ManyIndexesRunTests
{
    [Fact]
    public async Task FourIndexes_SharedPassReadsTheCollectionOnce_TheOtherWaysFourTimes()
    {
        using var root = new TempDirectory("indexing-many-indexes-tests");
        var storePath = Path.Combine(root.Path, "store");
        using (var store = DocumentStore.Open(storePath, new StoreOptions(syncWrites: false)))
        {
            store.PutMany(DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, targetTotalBytes: 3_000_000)).Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
        }

        var definitions = ManyIndexesRun.OrdersDefinitions(DatasetSpec.DefaultCollection);
        // A long window: the four join however loaded the machine (each opens its index first).
        var shared = await ManyIndexesRun.RunAsync(storePath, definitions, ManyIndexesWay.SharedPass, RebuildDevice.Local, root.Path, sharedPassWindow: TimeSpan.FromSeconds(10));
        var independent = await ManyIndexesRun.RunAsync(storePath, definitions, ManyIndexesWay.Independent, RebuildDevice.Local, root.Path);
        var oneAfterAnother = await ManyIndexesRun.RunAsync(storePath, definitions, ManyIndexesWay.OneAfterAnother, RebuildDevice.Local, root.Path);

        Assert.Equal(4, shared.Indexes);
        Assert.True(shared.Documents > 100, shared.ToString());
        Assert.Equal(1, shared.Sources);
        Assert.Equal(shared.CollectionBytes, shared.BytesReadFromStore);
        Assert.Equal(4, independent.Sources);
        Assert.Equal(4 * shared.CollectionBytes, independent.BytesReadFromStore);
        Assert.Equal(4, oneAfterAnother.Sources);
        Assert.Equal(4 * shared.CollectionBytes, oneAfterAnother.BytesReadFromStore);
        Assert.All(new[] { shared, independent, oneAfterAnother }, figures =>
        {
            Assert.True(figures.Wall > TimeSpan.Zero);
            Assert.True(figures.StoreBytesOnDisk > 0);
            Assert.Contains("read ", figures.ToString(), StringComparison.Ordinal);
        });
        Assert.False(Directory.EnumerateDirectories(root.Path, "indexes-*").Any(), "a run left its indexes behind");
    }
}
