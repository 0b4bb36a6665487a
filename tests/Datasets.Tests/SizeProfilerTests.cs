namespace Indexing.Datasets.Tests;

public sealed class SizeProfilerTests
{
    [Fact]
    public void Profile_OneToHundred_ExactFigures()
    {
        var profile = SizeProfiler.Profile(Enumerable.Range(1, 100).Select(i => (long)i));

        Assert.Equal(100, profile.Count);
        Assert.Equal(5050, profile.TotalBytes);
        Assert.Equal(1, profile.MinBytes);
        Assert.Equal(50, profile.P50Bytes);
        Assert.Equal(90, profile.P90Bytes);
        Assert.Equal(99, profile.P99Bytes);
        Assert.Equal(100, profile.MaxBytes);
        Assert.Equal(50.5, profile.MeanBytes);
        Assert.Equal(0, profile.PercentileRelativeError);
        Assert.Equal(Enumerable.Range(0, 10).Select(d => (10 * d) + 5.5), profile.DecileMeanBytes);
    }

    [Fact]
    public void Profile_ThreeSizes_NearestRankPercentiles()
    {
        var profile = SizeProfiler.Profile([30_000, 10_000, 20_000]);

        Assert.Equal(20_000, profile.P50Bytes);
        Assert.Equal(30_000, profile.P90Bytes);
        Assert.Equal(30_000, profile.P99Bytes);
        // Ten tenths of three documents: each tenth is 0.3 of a document, cut where it falls.
        Assert.Equal(30_000, profile.DecileMeanBytes[0]);
        Assert.Equal(20_000, profile.DecileMeanBytes[9]);
        Assert.Equal(profile.MeanBytes, profile.DecileMeanBytes.Average(), 6);
    }

    [Fact]
    public void Profile_SingleSize_EveryFigureIsThatSize()
    {
        var profile = SizeProfiler.Profile([7_777]);

        Assert.Equal([7_777, 7_777, 7_777, 7_777, 7_777], [profile.MinBytes, profile.P50Bytes, profile.P90Bytes, profile.P99Bytes, profile.MaxBytes]);
        Assert.All(profile.DecileMeanBytes, mean => Assert.Equal(7_777, mean));
        Assert.Equal(1, profile.KeyOrderGrowth);
    }

    [Fact]
    public void Profile_Empty_AllZero()
    {
        var profile = new SizeProfiler().ToProfile();

        Assert.Equal(0, profile.Count);
        Assert.Equal([0, 0, 0, 0, 0, 0], [profile.TotalBytes, profile.MinBytes, profile.P50Bytes, profile.P90Bytes, profile.P99Bytes, profile.MaxBytes]);
        Assert.Equal(0, profile.KeyOrderGrowth);
        Assert.StartsWith("0 documents", profile.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Add_NegativeSize_ThrowsNamingPosition()
    {
        var profiler = new SizeProfiler();
        profiler.Add(5);

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => profiler.Add(-1));

        Assert.Contains("#2", error.Message, StringComparison.Ordinal);
        Assert.Equal(1, profiler.Count);
    }

    [Fact]
    public void Profile_ManySkewedSizes_PercentilesWithinBucketError()
    {
        var random = new Random(17);
        var sizes = Enumerable.Range(0, 200_000).Select(_ => (long)(4096 * Math.Exp(1.5 * (random.NextDouble() + random.NextDouble() - 1) * 2.4))).ToArray();

        var profile = SizeProfiler.Profile(sizes);

        Assert.True(profile.PercentileRelativeError is > 0 and <= 0.02);
        Assert.Equal(sizes.Sum(), profile.TotalBytes);
        Assert.Equal(sizes.Min(), profile.MinBytes);
        Assert.Equal(sizes.Max(), profile.MaxBytes);
        foreach (var (quantile, reported) in new[] { (0.50, profile.P50Bytes), (0.90, profile.P90Bytes), (0.99, profile.P99Bytes) })
        {
            var exact = Shapes.Percentile(sizes, quantile);
            Assert.InRange(reported, exact * (1 - profile.PercentileRelativeError), exact * (1 + profile.PercentileRelativeError));
        }
    }

    [Theory]
    [InlineData(1_500)]
    [InlineData(123_457)]
    public void Profile_StreamLongerThanChunks_DecilesWithinTwoPercent(int count)
    {
        // A sawtooth on a rising trend: chunk merging must keep both the trend and the level.
        var sizes = Enumerable.Range(0, count).Select(i => 1_000L + (i % 7 * 300) + (i * 50L / count * 100)).ToArray();

        var profile = SizeProfiler.Profile(sizes);

        var tenth = count / 10.0;
        for (var d = 0; d < 10; d++)
        {
            var exact = sizes.Skip((int)Math.Round(d * tenth)).Take((int)Math.Round((d + 1) * tenth) - (int)Math.Round(d * tenth)).Average();
            Assert.InRange(profile.DecileMeanBytes[d], exact * 0.98, exact * 1.02);
        }
    }

    [Fact]
    public void Profile_Growing_DecilesRise()
    {
        var profile = SizeProfiler.Profile(DatasetGenerator.PlannedSizes(new DatasetSpec(DatasetShape.Growing, documentCount: 50_000)));

        Assert.InRange(profile.KeyOrderGrowth, 50, 200);
        Assert.All(profile.DecileMeanBytes.Zip(profile.DecileMeanBytes.Skip(1)), pair => Assert.True(pair.Second > pair.First * 1.3));
    }

    [Fact]
    public void Profile_Uniform_DecilesFlat()
    {
        var profile = SizeProfiler.Profile(DatasetGenerator.PlannedSizes(new DatasetSpec(DatasetShape.Uniform, documentCount: 50_000)));

        Assert.InRange(profile.KeyOrderGrowth, 0.98, 1.02);
        Assert.All(profile.DecileMeanBytes, mean => Assert.InRange(mean, profile.MeanBytes * 0.99, profile.MeanBytes * 1.01));
    }

    [Fact]
    public void ToString_LargeProfile_TableWithPercentilesAndDeciles()
    {
        var profile = SizeProfiler.Profile(DatasetGenerator.PlannedSizes(new DatasetSpec(DatasetShape.RareGiants, documentCount: 20_000)));

        var text = profile.ToString();

        Assert.StartsWith("20,000 documents, ", text, StringComparison.Ordinal);
        Assert.Contains("  p99  ", text, StringComparison.Ordinal);
        Assert.Contains("within 0.8%", text, StringComparison.Ordinal);
        Assert.Contains("\n    0-10%  ", text, StringComparison.Ordinal);
        Assert.Contains("\n  90-100%  ", text, StringComparison.Ordinal);
        Assert.Contains("last tenth / first tenth", text, StringComparison.Ordinal);
    }

    [Fact]
    public void ToString_SmallProfile_SaysExact()
    {
        Assert.Contains("(percentiles exact)", SizeProfiler.Profile([1, 2, 3]).ToString(), StringComparison.Ordinal);
    }
}
