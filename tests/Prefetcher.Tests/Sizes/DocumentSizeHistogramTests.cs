namespace Indexing.Prefetcher.Tests;

public sealed class DocumentSizeHistogramTests
{
    // A bucket is at most 1/16 of its values wide; two widths allow the estimate and the exact
    // order statistic to land in neighbouring buckets.
    private const double BucketTolerance = 2.0 / 16;

    [Theory]
    [MemberData(nameof(SizeShapes.All), MemberType = typeof(SizeShapes))]
    public void Snapshot_KnownDistribution_PercentilesWithinBucketTolerance(string shape)
    {
        var sizes = SizeShapes.Generate(shape, 50_000, seed: 7);
        var histogram = new DocumentSizeHistogram();
        for (var i = 0; i < sizes.Length; i++)
        {
            histogram.Record(sizes[i], $"doc-{i}");
        }

        var distribution = histogram.Snapshot();

        var sorted = sizes.Order().ToArray();
        AssertNear(ExactPercentile(sorted, 0.5), distribution.P50);
        AssertNear(ExactPercentile(sorted, 0.9), distribution.P90);
        AssertNear(ExactPercentile(sorted, 0.99), distribution.P99);
        Assert.Equal(sorted[^1], distribution.Max);
        Assert.Equal($"doc-{Array.IndexOf(sizes, sorted[^1])}", distribution.LargestRecentId);
        Assert.Equal(sizes.Length, distribution.WeightedCount, precision: 6);
        Assert.True(distribution.P50 <= distribution.P90 && distribution.P90 <= distribution.P99 && distribution.P99 <= distribution.Max);
    }

    [Fact]
    public void Snapshot_RareGiants_PercentilesStaySmallWhileMaxNamesTheGiant()
    {
        var histogram = new DocumentSizeHistogram();
        for (var i = 0; i < 999; i++)
        {
            histogram.Record(2048, $"small-{i}");
        }

        histogram.Record(20L * 1024 * 1024, "giant");

        var distribution = histogram.Snapshot();
        AssertNear(2048, distribution.P99);
        Assert.Equal(20L * 1024 * 1024, distribution.Max);
        Assert.Equal("giant", distribution.LargestRecentId);
    }

    [Theory]
    [InlineData(0, 1024)]
    [InlineData(3, 1024 * 1024)]
    public void Decay_OldSizesLoseWeight_NewSizesTakeOverTheMedian(int ticksBetween, long expectedP50)
    {
        var histogram = new DocumentSizeHistogram();
        RecordMany(histogram, 1000, 1024);
        for (var i = 0; i < ticksBetween; i++)
        {
            histogram.Decay(0.5);
        }

        RecordMany(histogram, 1000, 1024 * 1024);

        // Equal counts put the median at the old size; three halvings leave the old sizes a
        // weight of 125 against 1000 new ones.
        var distribution = histogram.Snapshot();
        Assert.Equal(1000 + (1000 * Math.Pow(0.5, ticksBetween)), distribution.WeightedCount, precision: 9);
        AssertNear(expectedP50, distribution.P50);
    }

    [Fact]
    public void Decay_ManyTicksWithoutRecords_WeightsDropToZero()
    {
        var histogram = new DocumentSizeHistogram(recentWindowTicks: 4);
        RecordMany(histogram, 10, 4096);

        for (var i = 0; i < 30; i++)
        {
            histogram.Decay(0.5);
        }

        Assert.Equal(new SizeDistribution(0, 0, 0, 0, null, 0), histogram.Snapshot());
    }

    [Fact]
    public void Snapshot_GiantOlderThanRecentWindow_AgesOutOfMaxAndLargestId()
    {
        var histogram = new DocumentSizeHistogram(recentWindowTicks: 4);
        histogram.Record(50_000_000, "giant");
        histogram.Decay(1);
        histogram.Record(3000, "later-small");

        histogram.Decay(1);
        histogram.Decay(1);
        Assert.Equal("giant", histogram.Snapshot().LargestRecentId);

        histogram.Decay(1);

        var distribution = histogram.Snapshot();
        Assert.Equal("later-small", distribution.LargestRecentId);
        Assert.Equal(3000, distribution.Max);
    }

    [Fact]
    public void Snapshot_DecayedGiantsStillWeighted_PercentilesClampedToRecentMax()
    {
        var histogram = new DocumentSizeHistogram(recentWindowTicks: 2);
        RecordMany(histogram, 100, 1024 * 1024);
        histogram.Decay(1);
        histogram.Decay(1);
        RecordMany(histogram, 100, 1000);

        var distribution = histogram.Snapshot();

        // Without the clamp P90 would sit in the 1 MiB bucket, above anything seen in the window.
        Assert.Equal(1000, distribution.Max);
        Assert.Equal(1000, distribution.P90);
        Assert.Equal(1000, distribution.P99);
    }

    [Fact]
    public void RecordBatch_SameSizesAsRecord_SameSnapshot()
    {
        var sizes = SizeShapes.Generate(SizeShapes.LogNormal, 4096, seed: 3);
        var ids = sizes.Select((_, i) => $"doc-{i}").ToArray();
        var one = new DocumentSizeHistogram();
        var batch = new DocumentSizeHistogram();

        for (var i = 0; i < sizes.Length; i++)
        {
            one.Record(sizes[i], ids[i]);
        }

        var body = new byte[sizes.Max()];
        batch.RecordBatch([.. sizes.Select((size, i) => new PrefetchedDocument(ids[i], 1, body.AsMemory(0, (int)size)))]);

        Assert.Equal(one.Snapshot(), batch.Snapshot());
    }

    [Fact]
    public void Arguments_OutOfRange_ThrowNamingTheValue()
    {
        var histogram = new DocumentSizeHistogram();

        Assert.Contains("-1", Assert.Throws<ArgumentOutOfRangeException>(() => histogram.Record(-1, "a")).Message, StringComparison.Ordinal);
        Assert.Contains("1.5", Assert.Throws<ArgumentOutOfRangeException>(() => histogram.Decay(1.5)).Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentOutOfRangeException>(() => histogram.Decay(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => histogram.Decay(double.NaN));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DocumentSizeHistogram(recentWindowTicks: 0));
    }

    [Fact]
    public async Task Record_ConcurrentThreads_CountsEveryDocumentAndFindsTheMax()
    {
        const int Threads = 4;
        const int PerThread = 25_000;
        var histogram = new DocumentSizeHistogram();

        await Task.WhenAll(Enumerable.Range(0, Threads).Select(t => Task.Run(() =>
        {
            var random = new Random(t);
            for (var i = 0; i < PerThread; i++)
            {
                histogram.Record(random.Next(1, 1_000_000), $"t{t}-{i}");
            }

            if (t == 2)
            {
                histogram.Record(5_000_000, "the-largest");
            }
        })));

        var distribution = histogram.Snapshot();
        Assert.Equal((Threads * PerThread) + 1, distribution.WeightedCount, precision: 6);
        Assert.Equal(5_000_000, distribution.Max);
        Assert.Equal("the-largest", distribution.LargestRecentId);
    }

    [Fact]
    public void BucketIndex_FourGiBAndAbove_ShareTheOverflowBucket()
    {
        // The bucket maths itself is LogLinearBuckets' (tests/Common.Tests); the overflow bucket is this histogram's.
        var overflow = DocumentSizeHistogram.BucketCount - 1;
        Assert.Equal(overflow, DocumentSizeHistogram.BucketIndex(4L << 30));
        Assert.Equal(overflow, DocumentSizeHistogram.BucketIndex(long.MaxValue));
        Assert.Equal(overflow - 1, DocumentSizeHistogram.BucketIndex((4L << 30) - 1));
        Assert.Equal((4L << 30, long.MaxValue), DocumentSizeHistogram.BucketBounds(overflow));
        Assert.Equal((4L << 30) - 1, DocumentSizeHistogram.BucketBounds(overflow - 1).Upper);
    }

    [Fact]
    public void FactorForHalfLife_TenSecondsAtQuarterSecondTicks_HalvesAfterFortyTicks()
    {
        var factor = DocumentSizeHistogram.FactorForHalfLife(TimeSpan.FromSeconds(10), TimeSpan.FromMilliseconds(250));

        Assert.Equal(Math.Pow(0.5, 0.025), factor, precision: 12);
        Assert.Equal(0.5, Math.Pow(factor, 40), precision: 12);
    }

    private static void RecordMany(DocumentSizeHistogram histogram, int count, long size)
    {
        for (var i = 0; i < count; i++)
        {
            histogram.Record(size, $"{size}-{i}");
        }
    }

    // The order statistic the histogram estimates: the smallest size with at least p of the
    // documents at or below it.
    private static long ExactPercentile(long[] sorted, double p) =>
        sorted[Math.Max(0, (int)Math.Ceiling(p * sorted.Length) - 1)];

    private static void AssertNear(long expected, long actual) =>
        Assert.True(
            Math.Abs(actual - expected) <= Math.Max(1, expected * BucketTolerance),
            $"Expected about {expected} (within {BucketTolerance:P1}), got {actual}.");
}
