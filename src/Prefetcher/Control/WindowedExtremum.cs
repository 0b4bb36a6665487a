namespace Indexing.Prefetcher;

/// <summary>
/// The largest or smallest sample taken within a sliding time window (at <c>t &lt;= now &lt; t + window</c>):
/// a monotonic deque, where a new sample evicts the older ones it is at least as extreme as.
/// </summary>
internal sealed class WindowedExtremum
{
    private readonly TimeSpan _window;
    private readonly bool _largest;
    private readonly LinkedList<(TimeSpan At, double Value)> _samples = new();
    private TimeSpan _lastAt = TimeSpan.MinValue;

    private WindowedExtremum(TimeSpan window, bool largest)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(window, TimeSpan.Zero);
        _window = window;
        _largest = largest;
    }

    /// <summary>Samples currently kept (for tests: never more than were added within the window).</summary>
    public int RetainedCount => _samples.Count;

    /// <summary>Keeps the largest sample of the window.</summary>
    public static WindowedExtremum Max(TimeSpan window) => new(window, largest: true);

    /// <summary>Keeps the smallest sample of the window.</summary>
    public static WindowedExtremum Min(TimeSpan window) => new(window, largest: false);

    public void Add(TimeSpan at, double value)
    {
        if (at < _lastAt)
        {
            throw new ArgumentOutOfRangeException(nameof(at), at, $"Samples must arrive in time order; the last was at {_lastAt}.");
        }
        if (double.IsNaN(value))
        {
            throw new ArgumentOutOfRangeException(nameof(value), "NaN has no order.");
        }
        _lastAt = at;
        Expire(at);
        // Ties evict too: the newer sample carries the same value and lives longer.
        while (_samples.Last is { } last && (_largest ? value >= last.Value.Value : value <= last.Value.Value))
        {
            _samples.RemoveLast();
        }
        _samples.AddLast((at, value));
    }

    /// <summary>The extreme of the samples still inside the window at <paramref name="now"/>, or null.</summary>
    public double? Current(TimeSpan now)
    {
        Expire(now);
        return _samples.First?.Value.Value;
    }

    private void Expire(TimeSpan now)
    {
        while (_samples.First is { } first && now - first.Value.At >= _window)
        {
            _samples.RemoveFirst();
        }
    }
}
