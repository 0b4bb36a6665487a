using System.Numerics;

namespace Indexing;

/// <summary>
/// The bucket maths of a log-linear histogram over non-negative whole numbers: exact (one bucket
/// per value) below <c>2 * SubBucketCount</c>, then <see cref="SubBucketCount"/> equal buckets per
/// power of two. A bucket from there up is at most <c>lower / SubBucketCount</c> wide, so the
/// relative width is bounded whatever the value. Counting, clamping, overflow buckets and
/// percentile rules belong to each histogram; this type only maps values to buckets and back.
/// </summary>
/// <remarks>
/// Bucket index = <c>shift * SubBucketCount + (value &gt;&gt; shift)</c>, where shift is how far
/// the value must move right to keep its leading bit plus <see cref="SubBucketBits"/> bits (0 in
/// the exact range). The histograms of foreground latencies, document sizes and size profiles
/// all use it, with 5, 4 and 6 bits.
/// </remarks>
internal readonly record struct LogLinearBuckets
{
    /// <summary>Buckets per power of two: 2^<paramref name="subBucketBits"/>, from 2 to 2^16.</summary>
    public LogLinearBuckets(int subBucketBits)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(subBucketBits, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(subBucketBits, 16);
        SubBucketBits = subBucketBits;
    }

    /// <summary>Bits of the value kept below its leading bit.</summary>
    public int SubBucketBits { get; }

    /// <summary>Buckets per power of two past the exact range.</summary>
    public int SubBucketCount => 1 << SubBucketBits;

    /// <summary>The bucket holding <paramref name="value"/> (zero or more).</summary>
    public int IndexOf(long value)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(value);
        var shift = Math.Max(0, BitOperations.Log2((ulong)value) - SubBucketBits);
        return (shift << SubBucketBits) + (int)(value >> shift);
    }

    /// <summary>How many buckets hold the values from 0 to <paramref name="maxValue"/>.</summary>
    public int CountUpTo(long maxValue) => IndexOf(maxValue) + 1;

    /// <summary>The smallest value of a bucket.</summary>
    public long LowerBound(int index)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        var shift = Shift(index);
        return (long)(index - (shift << SubBucketBits)) << shift;
    }

    /// <summary>How many values a bucket holds: 1 in the exact range, then doubling every <see cref="SubBucketCount"/> buckets.</summary>
    public long Width(int index)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(index);
        return 1L << Shift(index);
    }

    /// <summary>The largest value of a bucket (its lower bound plus its width, minus one).</summary>
    public long UpperBound(int index) => LowerBound(index) + (Width(index) - 1); // no overflow in the bucket of long.MaxValue

    // The exact range (the first two powers' worth of buckets) has shift 0; each SubBucketCount
    // buckets after it add one.
    private int Shift(int index) => Math.Max(0, (index >> SubBucketBits) - 1);
}
