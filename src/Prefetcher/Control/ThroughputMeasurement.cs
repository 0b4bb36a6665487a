namespace Indexing.Prefetcher;

/// <summary>
/// Throughput over a run of ticks at one concurrency: the mean (bytes over time) and how
/// uncertain that mean is. Not thread-safe: part of the controller's tick loop.
/// <para>
/// The uncertainty needs care. Much of the per-tick noise is a task completing just before or
/// just after a tick edge: one tick's surplus is the next one's deficit, so over an interval it
/// cancels and the error of the mean shrinks like 1/n, not 1/sqrt(n). Genuine rate fluctuations
/// (a neighbour on the disk) do not cancel. The estimate therefore uses the lag-1 autocovariance
/// (negative for edge effects, zero for independent noise, positive for drifts):
/// Var(mean) ~ (var + 2 cov1) / n, never below var / n^2, the pure edge-effect case. Treating all
/// noise as independent made lumpy workloads (20 MB documents, each one 300 ms completion)
/// measure four times longer than needed.
/// </para>
/// </summary>
internal sealed class ThroughputMeasurement
{
    /// <summary>Fewest ticks the error of the mean can be estimated from (a variance and a lag-1 covariance).</summary>
    public const int MinTicksForError = 3;

    private readonly List<double> _rates = [];
    private long _bytes;
    private long _largestRead;

    public TimeSpan Time { get; private set; }

    public int TickCount => _rates.Count;

    public double BytesPerSecond => Time > TimeSpan.Zero ? _bytes / Time.TotalSeconds : 0;

    /// <summary>Standard error of the mean relative to it; infinite until <see cref="MinTicksForError"/> ticks are in.</summary>
    public double RelativeError
    {
        get
        {
            var n = _rates.Count;
            var mean = BytesPerSecond;
            if (n < MinTicksForError || mean <= 0)
            {
                return double.PositiveInfinity;
            }
            var rateMean = _rates.Average();
            double variance = 0;
            double lag1 = 0;
            for (var i = 0; i < n; i++)
            {
                var deviation = _rates[i] - rateMean;
                variance += deviation * deviation;
                if (i > 0)
                {
                    lag1 += deviation * (_rates[i - 1] - rateMean);
                }
            }
            variance /= n - 1;
            lag1 /= n - 1;
            var longRunVariance = Math.Max(variance + (2 * lag1), variance / n);
            // Never below one read's share of the bytes: whether the largest read ends just
            // inside or just outside the measurement moves the mean by that much, however
            // regular the ticks looked (20 MB documents on a slow disk complete a few per second).
            return Math.Max(Math.Sqrt(longRunVariance / n) / mean, _bytes > 0 ? (double)_largestRead / _bytes : 0);
        }
    }

    /// <param name="bytes">Bytes delivered in the tick.</param>
    /// <param name="tickDuration">Its length.</param>
    /// <param name="largestRead">The largest read that completed in it (0: not known).</param>
    public void Add(long bytes, TimeSpan tickDuration, long largestRead = 0)
    {
        _bytes += bytes;
        _largestRead = Math.Max(_largestRead, largestRead);
        Time += tickDuration;
        _rates.Add(bytes / tickDuration.TotalSeconds);
    }

    public void Reset()
    {
        _rates.Clear();
        _bytes = 0;
        _largestRead = 0;
        Time = TimeSpan.Zero;
    }
}
