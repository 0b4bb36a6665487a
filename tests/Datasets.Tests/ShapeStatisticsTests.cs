namespace Indexing.Datasets.Tests;

// Shapes checked on the sizes of generated bodies, a few thousand documents each.
public sealed class ShapeStatisticsTests
{
    private const int Count = 4000;

    [Fact]
    public void Uniform_SizesNear4KiB_NarrowSpread()
    {
        var sizes = Shapes.GeneratedSizes(new DatasetSpec(DatasetShape.Uniform, documentCount: Count));
        var p50 = Shapes.Percentile(sizes, 0.50);

        Assert.InRange(p50, 4096 * 0.95, 4096 * 1.05);
        Assert.True(Shapes.Percentile(sizes, 0.99) < 1.3 * p50);
    }

    [Fact]
    public void LogNormal_Median4KiB_HeavyTail()
    {
        var sizes = Shapes.GeneratedSizes(new DatasetSpec(DatasetShape.LogNormal, documentCount: Count));
        var p50 = Shapes.Percentile(sizes, 0.50);

        Assert.InRange(p50, 4096 * 0.85, 4096 * 1.15);
        Assert.True(Shapes.Percentile(sizes, 0.99) > 10 * p50, $"p99 {Shapes.Percentile(sizes, 0.99)} vs p50 {p50}");
        Assert.True(sizes.Min() >= DatasetSpec.MinDocumentBytes);
        Assert.True(sizes.Max() <= DatasetSpec.DefaultMaxDocumentBytes);
    }

    [Fact]
    public void Growing_LastTenth_AboutSixtyTimesFirst()
    {
        var sizes = Shapes.GeneratedSizes(new DatasetSpec(DatasetShape.Growing, documentCount: Count));
        var deciles = Shapes.DecileMeans(sizes);

        // Growth of 100x from first to last key puts the decile means about 63x apart.
        Assert.InRange(deciles[9] / deciles[0], 50, 200);
        Assert.All(deciles.Zip(deciles.Skip(1)), pair => Assert.True(pair.Second > pair.First));
    }

    [Fact]
    public void RareGiants_OneInTwoHundred_SpreadThroughKeySpace()
    {
        var sizes = Shapes.GeneratedSizes(new DatasetSpec(DatasetShape.RareGiants, documentCount: Count, seed: 8));
        var giants = Enumerable.Range(0, sizes.Length).Where(i => sizes[i] > 1L << 20).ToList();

        Assert.InRange(giants.Count / (double)Count, 0.004, 0.006);
        Assert.All(giants, i => Assert.InRange(sizes[i], 2L << 20, 20L << 20));
        Assert.True(giants.Select(i => i * 10 / Count).Distinct().Count() >= 8, "giants cluster in few tenths of the key space");
        Assert.InRange(Shapes.Percentile(sizes, 0.50), 2048 * 0.9, 2048 * 1.1);
        Assert.All(sizes.Where(s => s <= 1L << 20), s => Assert.InRange(s, 2048 * 0.89, 2048 * 1.11));
    }

    [Theory]
    [MemberData(nameof(Shapes.All), MemberType = typeof(Shapes))]
    public void PlannedSizes_ManyDocuments_MeanNearExpected(DatasetShape shape)
    {
        var spec = new DatasetSpec(shape, documentCount: 200_000, seed: 4);

        var mean = DatasetGenerator.PlannedSizes(spec).Average();

        Assert.InRange(mean / SizePlan.ExpectedMeanBytes(shape), 0.9, 1.1);
    }
}
