using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Measurement.Tests;

// The following-prefetch measurement over a small store on a fast modelled disk: every read reads
// the whole collection, and each has a rate and the time it reached 80% of it (the lab quotes the
// times; the test checks that they are there and consistent, not their values).
public sealed class FollowingPrefetchRunTests
{
    [Fact]
    public async Task Run_ReadsTheCollectionEachTime_AndGivesEachReadItsRate()
    {
        using var root = new TempDirectory("indexing-following-prefetch-tests");
        var storePath = Path.Combine(root.Path, "store");
        long collectionBytes;
        using (var store = DocumentStore.Open(storePath, new StoreOptions(syncWrites: false)))
        {
            var documents = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, targetTotalBytes: 4_000_000)).ToList();
            store.PutMany(documents.Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
            collectionBytes = documents.Sum(d => (long)d.Utf8Json.Length);
        }

        // Slow enough that each read lasts well over the quarter second the rate is measured over.
        var device = RebuildDevice.ModelledNetworkDisk(TimeSpan.FromMilliseconds(1), 2_000_000, 4);
        var figures = await FollowingPrefetchRun.RunAsync(storePath, DatasetSpec.DefaultCollection, device, [4]);

        Assert.Equal(["first", "following", "fixed L=4"], figures.Select(f => f.Label));
        Assert.All(figures, f =>
        {
            Assert.Equal(collectionBytes, f.Bytes);
            Assert.True(f.FinalMegabytesPerSecond > 0, f.ToString());
            Assert.NotNull(f.TimeTo80Percent);
            Assert.True(f.TimeTo80Percent <= f.Wall, f.ToString());
        });
        Assert.NotNull(figures[0].FirstDecision);
        Assert.Null(figures[2].FirstDecision);
    }
}
