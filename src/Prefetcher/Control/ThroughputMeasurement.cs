namespace Indexing.Prefetcher;

/// <summary>
/// Throughput over a run of ticks at one concurrency, and how uncertain it is. <b>From the reads
/// themselves</b> (Little's law) when reads in flight are measured: mean reads in flight x Σ bytes /
/// Σ latency, so a 20 MB read completing on either side of a tick edge does not move it (bytes per
/// tick swing by a large share of the rate with a slow disk's giants); only reads issued since the measurement
/// began count, as the old L's shorter latencies would promise too much. <b>From bytes per tick</b>
/// otherwise: a tick's surplus at an edge is the next one's deficit, so Var(mean) ~ (var + 2 lag-1
/// cov) / n, never below var / n^2 nor the largest read's share. An unsettled tick (the first)
/// feeds only the estimate from reads.
/// </summary>
internal sealed class ThroughputMeasurement
{
    /// <summary>Fewest ticks the error of the mean can be estimated from (a variance and a lag-1 covariance).</summary>
    public const int MinTicksForError = 3;

    /// <summary>Fewest completed reads the rate per second of latency is taken from.</summary>
    public const int MinReadsForRate = 3;

    private readonly List<double> _rates = [];
    private long _bytes;
    private long _largestRead;
    private TimeSpan _inFlight;

    // Σ over completed reads of bytes, latency (seconds), and the squares and product, for the ratio.
    private double _readBytes;
    private double _readSeconds;
    private double _bytesSquared;
    private double _secondsSquared;
    private double _bytesTimesSeconds;

    /// <summary>Length of the settled ticks (those bytes per tick count over).</summary>
    public TimeSpan Time { get; private set; }

    /// <summary>Length of all ticks added, settled or not (reads in flight are integrated over it).</summary>
    public TimeSpan TimeWithUnsettled { get; private set; }

    public int TickCount => _rates.Count;

    /// <summary>Completed reads the rate from the reads is taken from.</summary>
    public int ReadCount { get; private set; }

    /// <summary>Whether the reads themselves (Little's law) give the throughput.</summary>
    public bool FromReads => _inFlight > TimeSpan.Zero && ReadCount >= MinReadsForRate && _readSeconds > 0;

    public double BytesPerSecond =>
        FromReads ? _inFlight / TimeWithUnsettled * (_readBytes / _readSeconds)
        : Time <= TimeSpan.Zero ? 0
        : _bytes / Time.TotalSeconds;

    /// <summary>Standard error of the throughput relative to it; infinite until it can be estimated.</summary>
    public double RelativeError =>
        BytesPerSecond <= 0 ? double.PositiveInfinity
        : FromReads ? RatioError()
        : _rates.Count < MinTicksForError ? double.PositiveInfinity
        : TickError();

    /// <summary>
    /// Adds a tick. With <paramref name="issuedFrom"/>, only reads issued from then on count (issued at
    /// <paramref name="tickEnd"/> less the latency: one issued just after may be left out, none before).
    /// </summary>
    public void Add(
        long bytes, TimeSpan tickDuration, ReadOnlySpan<ReadSample> reads = default, TimeSpan readsInFlightTime = default,
        TimeSpan? issuedFrom = null, TimeSpan tickEnd = default, bool settled = true)
    {
        if (settled)
        {
            _bytes += bytes;
            Time += tickDuration;
            _rates.Add(bytes / tickDuration.TotalSeconds);
        }
        _inFlight += readsInFlightTime;
        TimeWithUnsettled += tickDuration;
        foreach (var read in reads)
        {
            _largestRead = Math.Max(_largestRead, read.Bytes);
            if (read.Latency <= TimeSpan.Zero || (issuedFrom is { } from && tickEnd - read.Latency < from))
            {
                continue;
            }
            double b = read.Bytes;
            var t = read.Latency.TotalSeconds;
            ReadCount++;
            _readBytes += b;
            _readSeconds += t;
            _bytesSquared += b * b;
            _secondsSquared += t * t;
            _bytesTimesSeconds += b * t;
        }
    }

    public void Reset()
    {
        _rates.Clear();
        _bytes = 0;
        _largestRead = 0;
        _inFlight = TimeSpan.Zero;
        TimeWithUnsettled = TimeSpan.Zero;
        Time = TimeSpan.Zero;
        ReadCount = 0;
        _readBytes = _readSeconds = _bytesSquared = _secondsSquared = _bytesTimesSeconds = 0;
    }

    // The ratio estimator R = Σb / Σt: Var(R) ~ Σ(b - R t)² / (n (n - 1) t̄²).
    private double RatioError()
    {
        var n = ReadCount;
        var ratio = _readBytes / _readSeconds;
        var residuals = Math.Max(0, _bytesSquared - (2 * ratio * _bytesTimesSeconds) + (ratio * ratio * _secondsSquared));
        var meanSeconds = _readSeconds / n;
        return Math.Sqrt(residuals / (n * (n - 1.0))) / meanSeconds / ratio;
    }

    private double TickError()
    {
        var n = _rates.Count;
        var mean = BytesPerSecond;
        var rateMean = _rates.Average();
        var variance = _rates.Sum(rate => (rate - rateMean) * (rate - rateMean)) / (n - 1);
        var lag1 = Enumerable.Range(1, n - 1).Sum(i => (_rates[i] - rateMean) * (_rates[i - 1] - rateMean)) / (n - 1);
        var longRunVariance = Math.Max(variance + (2 * lag1), variance / n);
        // Never below one read's share of the bytes: whether the largest read ends just inside or
        // just outside the measurement moves the mean by that much, however regular the ticks.
        return Math.Max(Math.Sqrt(longRunVariance / n) / mean, _bytes > 0 ? (double)_largestRead / _bytes : 0);
    }
}
