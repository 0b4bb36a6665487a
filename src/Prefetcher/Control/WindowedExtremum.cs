namespace Indexing.Prefetcher;

/// <summary>
/// The largest or smallest sample taken within a sliding time window (at <c>t &lt;= now &lt; t + window</c>):
/// a monotonic deque, where a new sample evicts the older ones it is at least as extreme as.
/// </summary>
internal sealed class WindowedExtremum
{
    private readonly TimeSpan _window;
    private readonly bool _largest;
    private (TimeSpan At, double Value)[] _items = new (TimeSpan, double)[8];
    private int _head;
    private int _count;
    private TimeSpan _lastAt = TimeSpan.MinValue;

    private WindowedExtremum(TimeSpan window, bool largest)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(window, TimeSpan.Zero);
        _window = window;
        _largest = largest;
    }

    /// <summary>Samples currently kept (for tests: never more than were added within the window).</summary>
    public int RetainedCount => _count;

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
        while (_count > 0 && (_largest ? value >= _items[Index(_count - 1)].Value : value <= _items[Index(_count - 1)].Value))
        {
            _count--;
        }
        if (_count == _items.Length)
        {
            Grow();
        }
        _items[Index(_count)] = (at, value);
        _count++;
    }

    /// <summary>The extreme of the samples still inside the window at <paramref name="now"/>, or null.</summary>
    public double? Current(TimeSpan now)
    {
        Expire(now);
        return _count == 0 ? null : _items[_head].Value;
    }

    private void Expire(TimeSpan now)
    {
        while (_count > 0 && now - _items[_head].At >= _window)
        {
            _head = Index(1);
            _count--;
        }
    }

    private int Index(int offset) => (_head + offset) % _items.Length;

    private void Grow()
    {
        var larger = new (TimeSpan, double)[_items.Length * 2];
        for (var i = 0; i < _count; i++)
        {
            larger[i] = _items[Index(i)];
        }
        _items = larger;
        _head = 0;
    }
}
