namespace Indexing.Datasets;

/// <summary>Builds a <see cref="SizeProfile"/> from document sizes given in key order, in bounded memory.</summary>
/// <remarks>
/// <para>
/// Memory is bounded (at most about 170 KiB) however many sizes are added: the first
/// <see cref="ExactPercentileLimit"/> sizes are kept for exact percentiles, every size also goes
/// into a log-linear histogram (64 buckets per power of two) used beyond that limit, and the key
/// order is followed by up to 1,024 running chunk means.
/// </para>
/// <para>
/// Deciles without knowing the count up front: sizes are summed in equal chunks of consecutive
/// sizes; when 1,024 chunks are full, neighbours merge and the chunk length doubles. The ten
/// tenths are cut from those chunks at the end, a chunk straddling a cut counting on both sides in
/// proportion. Up to 1,024 sizes this is exact; beyond, a chunk spans at most 0.2% of the stream,
/// so at most 2% of a tenth's documents are averaged with a neighbouring tenth.
/// </para>
/// <para>Not thread-safe: one reader adds sizes as it scans, then takes the profile.</para>
/// </remarks>
public sealed class SizeProfiler
{
    /// <summary>Up to this many sizes, percentiles are exact.</summary>
    public const int ExactPercentileLimit = 10_000;

    private static ReadOnlySpan<int> PerMille => [500, 900, 990];

    private readonly LogLinearHistogram _histogram = new();
    private readonly KeyOrderMeans _keyOrder = new();
    private readonly List<long> _exact = [];
    private long _totalBytes;
    private long _minBytes = long.MaxValue;
    private long _maxBytes;

    /// <summary>Number of sizes added so far.</summary>
    public long Count => _histogram.Count;

    /// <summary>Profiles a whole sequence of sizes given in key order.</summary>
    public static SizeProfile Profile(IEnumerable<long> sizesInKeyOrder)
    {
        ArgumentNullException.ThrowIfNull(sizesInKeyOrder);
        var profiler = new SizeProfiler();
        foreach (var size in sizesInKeyOrder)
        {
            profiler.Add(size);
        }

        return profiler.ToProfile();
    }

    /// <summary>Adds the size of the next document in key order.</summary>
    public void Add(long sizeBytes)
    {
        if (sizeBytes < 0)
        {
            throw new ArgumentOutOfRangeException(
                nameof(sizeBytes), sizeBytes, $"size {sizeBytes} (document #{Count + 1} in key order) is negative; sizes are byte counts, 0 or more.");
        }

        _histogram.Add(sizeBytes);
        _keyOrder.Add(sizeBytes);
        _totalBytes = checked(_totalBytes + sizeBytes);
        _minBytes = Math.Min(_minBytes, sizeBytes);
        _maxBytes = Math.Max(_maxBytes, sizeBytes);
        if (_exact.Count < ExactPercentileLimit)
        {
            _exact.Add(sizeBytes);
        }
    }

    /// <summary>The profile of the sizes added so far; adding may go on afterwards.</summary>
    public SizeProfile ToProfile()
    {
        var count = Count;
        Span<long> percentiles = stackalloc long[PerMille.Length];
        var exact = count <= ExactPercentileLimit;
        if (count == 0)
        {
            percentiles.Clear();
        }
        else if (exact)
        {
            var sorted = _exact.ToArray();
            Array.Sort(sorted);
            for (var i = 0; i < PerMille.Length; i++)
            {
                percentiles[i] = sorted[LogLinearHistogram.NearestRank(PerMille[i], count) - 1];
            }
        }
        else
        {
            _histogram.Percentiles(PerMille, percentiles, _minBytes, _maxBytes);
        }

        return new SizeProfile(
            count,
            _totalBytes,
            count == 0 ? 0 : _minBytes,
            percentiles[0],
            percentiles[1],
            percentiles[2],
            _maxBytes,
            exact ? 0 : LogLinearHistogram.RelativeError,
            _keyOrder.Means());
    }
}
