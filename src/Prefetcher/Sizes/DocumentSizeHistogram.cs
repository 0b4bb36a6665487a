using System.Diagnostics;

namespace Indexing.Prefetcher;

// A decayed histogram of recent document sizes, in log-linear buckets (at most 6.25% wide) up to 4
// GiB. Weights under MinWeight become zero: no denormals in long runs. The recent maximum is exact:
// the largest of the last RecentWindowTicks ticks, so a giant seen long ago ages out completely;
// percentiles are clamped to it, so P99 never claims a size nobody has seen lately. One lock.
internal sealed class DocumentSizeHistogram
{
    public const int DefaultRecentWindowTicks = 40;

    private const long OverflowBytes = 1L << 32;
    private const double MinWeight = 1e-6;

    private static readonly LogLinearBuckets _buckets = new(subBucketBits: 4);

    // Every size from 4 GiB up shares the bucket 4 GiB itself would have.
    private static readonly int _overflowIndex = _buckets.IndexOf(OverflowBytes);

    internal static readonly int BucketCount = _overflowIndex + 1;

    private readonly Lock _lock = new();
    private readonly double[] _weights = new double[BucketCount];
    private readonly RecentSlot[] _recent;
    private double _weightedCount;
    private int _currentSlot;

    public DocumentSizeHistogram(int recentWindowTicks = DefaultRecentWindowTicks)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(recentWindowTicks, 1);
        _recent = new RecentSlot[recentWindowTicks];
    }

    // The per-tick factor that halves a weight every halfLife, e.g. 10 s at 250 ms ticks -> 0.5^0.025.
    public static double FactorForHalfLife(TimeSpan halfLife, TimeSpan tick)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(halfLife, TimeSpan.Zero);
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(tick, TimeSpan.Zero);
        return Math.Pow(0.5, tick / halfLife);
    }

    public void Record(long sizeBytes, string documentId)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sizeBytes);
        ArgumentNullException.ThrowIfNull(documentId);
        var index = BucketIndex(sizeBytes);
        lock (_lock)
        {
            _weights[index] += 1;
            _weightedCount += 1;
            OfferRecentLocked(sizeBytes, documentId);
        }
    }

    public void RecordBatch(IReadOnlyList<PrefetchedDocument> documents)
    {
        if (documents.Count == 0)
        {
            return;
        }

        var largest = documents[0];
        lock (_lock)
        {
            for (var i = 0; i < documents.Count; i++)
            {
                var document = documents[i];
                _weights[BucketIndex(document.SizeBytes)] += 1;
                largest = document.SizeBytes > largest.SizeBytes ? document : largest;
            }

            _weightedCount += documents.Count;
            OfferRecentLocked(largest.SizeBytes, largest.Id);
        }
    }

    // One tick: ages every weight by factor and moves the recent window on.
    public void Decay(double factor)
    {
        if (!(factor > 0 && factor <= 1))
        {
            throw new ArgumentOutOfRangeException(nameof(factor), factor, $"factor is {factor}; a decay factor must be in (0, 1].");
        }

        lock (_lock)
        {
            var total = 0.0;
            for (var i = 0; i < _weights.Length; i++)
            {
                var weight = _weights[i] * factor;
                _weights[i] = weight < MinWeight ? 0 : weight;
                total += _weights[i];
            }

            // Re-summed rather than scaled, so rounding drift and dropped weights cannot accumulate.
            _weightedCount = total;
            _currentSlot = (_currentSlot + 1) % _recent.Length;
            _recent[_currentSlot] = default;
        }
    }

    public SizeDistribution Snapshot()
    {
        lock (_lock)
        {
            var recent = _recent.Where(slot => slot.Id is not null).DefaultIfEmpty().MaxBy(slot => slot.Bytes);

            if (_weightedCount <= 0)
            {
                return new SizeDistribution(0, 0, 0, recent.Bytes, recent.Id, 0);
            }

            var ceiling = recent.Id is null ? long.MaxValue : recent.Bytes;
            Span<double> quantiles = [0.5, 0.9, 0.99];
            Span<long> values = stackalloc long[quantiles.Length];
            Percentiles(_weights, _weightedCount, quantiles, values, ceiling);
            return new SizeDistribution(values[0], values[1], values[2], recent.Bytes, recent.Id, _weightedCount);
        }
    }

    internal static int BucketIndex(long sizeBytes)
    {
        Debug.Assert(sizeBytes >= 0, "Sizes are validated before bucketing.");
        return sizeBytes >= OverflowBytes ? _overflowIndex : _buckets.IndexOf(sizeBytes);
    }

    // Inclusive bounds of a bucket's values; the overflow bucket's is open-ended.
    internal static (long Lower, long Upper) BucketBounds(int index) =>
        index >= _overflowIndex ? (OverflowBytes, long.MaxValue) : (_buckets.LowerBound(index), _buckets.UpperBound(index));

    private static void Percentiles(
        ReadOnlySpan<double> weights, double total, ReadOnlySpan<double> quantiles, Span<long> values, long ceiling)
    {
        var next = 0;
        var cumulative = 0.0;
        var lastNonEmpty = 0;
        for (var i = 0; i < weights.Length && next < quantiles.Length; i++)
        {
            var weight = weights[i];
            if (weight <= 0)
            {
                continue;
            }

            lastNonEmpty = i;
            while (next < quantiles.Length && cumulative + weight >= quantiles[next] * total)
            {
                var fraction = Math.Clamp((quantiles[next] * total - cumulative) / weight, 0, 1);
                values[next++] = ValueInBucket(i, fraction, ceiling);
            }

            cumulative += weight;
        }

        // Rounding can leave the top quantiles just short of the total: they belong to the last bucket.
        for (; next < quantiles.Length; next++)
        {
            values[next] = ValueInBucket(lastNonEmpty, 1, ceiling);
        }
    }

    // Linear by rank inside the bucket, then clamped to the recent maximum (where the overflow bucket ends).
    private static long ValueInBucket(int index, double fraction, long ceiling)
    {
        var (lower, upper) = BucketBounds(index);
        if (index == _overflowIndex)
        {
            upper = ceiling == long.MaxValue ? lower : Math.Max(lower, ceiling);
        }

        var value = Math.Min(lower + (long)(fraction * (upper - lower + 1)), upper);
        return Math.Min(value, ceiling);
    }

    private void OfferRecentLocked(long sizeBytes, string documentId)
    {
        ref var slot = ref _recent[_currentSlot];
        if (slot.Id is null || sizeBytes > slot.Bytes)
        {
            slot = new RecentSlot(sizeBytes, documentId);
        }
    }

    // The largest document recorded during one tick; Id is null while the tick recorded nothing.
    private readonly record struct RecentSlot(long Bytes, string? Id);
}

// A DocumentSizeHistogram reading: percentiles of the decayed distribution, within about 6% and
// never above Max, the largest document of the recent window (0 if none).
internal readonly record struct SizeDistribution(
    long P50,
    long P90,
    long P99,
    long Max,
    string? LargestRecentId,
    double WeightedCount);
