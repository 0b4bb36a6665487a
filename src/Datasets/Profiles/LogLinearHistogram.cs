namespace Indexing.Datasets;

// Counts of sizes in log-linear buckets: exact below 2 * SubBuckets, then SubBuckets equal
// buckets per power of two up to long.MaxValue. A bucket [lower, lower + width) has width at most
// lower / SubBuckets, so its midpoint is within 1 / (2 * SubBuckets) = 0.78% of any value in it.
// Fixed memory (about 3,700 counters) whatever the number of sizes. The bucket maths is LogLinearBuckets'.
internal sealed class LogLinearHistogram
{
    public const int SubBucketBits = 6;
    public const int SubBuckets = 1 << SubBucketBits;

    /// <summary>Largest relative distance between a reported percentile and the true one.</summary>
    public const double RelativeError = 1.0 / (2 * SubBuckets);

    private static readonly LogLinearBuckets _buckets = new(SubBucketBits);

    private readonly long[] _counts = new long[_buckets.CountUpTo(long.MaxValue)];

    public long Count { get; private set; }

    public void Add(long value)
    {
        _counts[BucketIndex(value)]++;
        Count++;
    }

    // Nearest-rank percentiles (the smallest value with at least perMille / 1000 of the values at
    // or below it), ascending, each reported as its bucket's midpoint clamped to [min, max].
    public void Percentiles(ReadOnlySpan<int> perMille, Span<long> values, long min, long max)
    {
        var next = 0;
        long cumulative = 0;
        for (var bucket = 0; bucket < _counts.Length && next < perMille.Length; bucket++)
        {
            cumulative += _counts[bucket];
            while (next < perMille.Length && cumulative >= NearestRank(perMille[next], Count))
            {
                var (lower, width) = Bounds(bucket);
                values[next++] = Math.Clamp(lower + ((width - 1) / 2), min, max);
            }
        }
    }

    // 1-based rank of the perMille percentile among count values: ceil(count * perMille / 1000), at
    // least 1. Integer arithmetic, since e.g. 0.9 * 10 in doubles can round up past 9.
    public static long NearestRank(int perMille, long count) => Math.Max(1, ((count * perMille) + 999) / 1000);

    // Negative values (none are expected: sizes) count as zero rather than throwing mid-profile.
    internal static int BucketIndex(long value) => _buckets.IndexOf(Math.Max(0, value));

    // First value and width of a bucket.
    internal static (long Lower, long Width) Bounds(int bucket) => (_buckets.LowerBound(bucket), _buckets.Width(bucket));
}
