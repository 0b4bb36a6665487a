namespace Indexing.Common.Tests;

// The bucket maths of the three log-linear histograms (latencies: 5 bits, document sizes: 4, size
// profiles: 6). Each histogram's own policy (a top bucket, an overflow bucket, clamping) is tested
// beside it.
public sealed class LogLinearBucketsTests
{
    [Theory]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public void Buckets_UpTo2Pow40_ContiguousAndAtMostOneSubBucketWide(int bits)
    {
        var buckets = new LogLinearBuckets(bits);
        var count = buckets.CountUpTo(1L << 40);
        for (var i = 0; i < count - 1; i++)
        {
            var lower = buckets.LowerBound(i);
            var upper = buckets.UpperBound(i);
            if (buckets.IndexOf(lower) != i || buckets.IndexOf(upper) != i || buckets.LowerBound(i + 1) != upper + 1
                || upper - lower + 1 != buckets.Width(i) || buckets.Width(i) > Math.Max(1, lower / buckets.SubBucketCount))
            {
                Assert.Fail($"{bits} bits: bucket {i} is [{lower}, {upper}], width {buckets.Width(i)}; the next starts at {buckets.LowerBound(i + 1)}");
            }
        }
    }

    [Theory]
    [InlineData(4)]
    [InlineData(5)]
    [InlineData(6)]
    public void IndexOf_EveryValueUpTo2Pow20_ExactBelowTwoSubBucketsThenInItsBucket(int bits)
    {
        var buckets = new LogLinearBuckets(bits);
        var previous = 0;
        for (long value = 0; value <= 1 << 20; value++)
        {
            var index = buckets.IndexOf(value);
            var exactOk = value >= 2 * buckets.SubBucketCount || index == value;
            if (index < previous || index > previous + 1 || !exactOk || value < buckets.LowerBound(index) || value > buckets.UpperBound(index))
            {
                Assert.Fail($"{bits} bits: {value} is in bucket {index} [{buckets.LowerBound(index)}, {buckets.UpperBound(index)}] after bucket {previous}");
            }

            previous = index;
        }
    }

    [Fact]
    public void UpperBound_BucketOfLongMaxValue_IsLongMaxValueWithoutOverflow()
    {
        var buckets = new LogLinearBuckets(6);
        var last = buckets.IndexOf(long.MaxValue);

        Assert.Equal(long.MaxValue, buckets.UpperBound(last));
        Assert.Equal(last + 1, buckets.CountUpTo(long.MaxValue));
        Assert.Equal(127L << 56, buckets.LowerBound(last));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(17)]
    public void Constructor_BitsOutOfRange_Throws(int bits) =>
        Assert.Throws<ArgumentOutOfRangeException>(() => new LogLinearBuckets(bits));

    [Fact]
    public void IndexOf_Negative_Throws() =>
        Assert.Throws<ArgumentOutOfRangeException>(() => new LogLinearBuckets(5).IndexOf(-1));
}
