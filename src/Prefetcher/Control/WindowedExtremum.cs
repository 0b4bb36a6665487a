namespace Indexing.Prefetcher;

/// <summary>
/// The most extreme value (largest for <see cref="WindowedMax"/>, smallest for
/// <see cref="WindowedMin"/>) among samples taken within a sliding time window, as BBR keeps its
/// bottleneck bandwidth and minimum RTT. Owns a monotonic deque of (time, value): a new sample
/// evicts every older sample it is at least as extreme as, because those can never be the answer
/// again (they are no better and will expire sooner), so the front is always the answer and each
/// sample is pushed and popped once: O(1) amortised.
/// <para>
/// Time is passed in explicitly (the controller uses time since start) so that simulations and
/// tests are deterministic. A sample taken at <c>t</c> counts for queries at
/// <c>t &lt;= now &lt; t + Window</c>: it ages out exactly at the window edge.
/// </para>
/// Not thread-safe: owned by the controller's tick loop.
/// </summary>
internal abstract class WindowedExtremum
{
    private (TimeSpan At, double Value)[] _items = new (TimeSpan, double)[8];
    private int _head;
    private int _count;
    private TimeSpan _lastAt = TimeSpan.MinValue;

    protected WindowedExtremum(TimeSpan window)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(window, TimeSpan.Zero);
        Window = window;
    }

    public TimeSpan Window { get; }

    /// <summary>Samples currently kept (for tests: never more than were added within the window).</summary>
    public int RetainedCount => _count;

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
        while (_count > 0 && Supersedes(value, _items[Index(_count - 1)].Value))
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

    /// <summary>True when <paramref name="candidate"/> is at least as extreme as <paramref name="incumbent"/>.</summary>
    protected abstract bool Supersedes(double candidate, double incumbent);

    private void Expire(TimeSpan now)
    {
        while (_count > 0 && now - _items[_head].At >= Window)
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

/// <summary>Largest sample within the window; see <see cref="WindowedExtremum"/>.</summary>
internal sealed class WindowedMax(TimeSpan window) : WindowedExtremum(window)
{
    protected override bool Supersedes(double candidate, double incumbent) => candidate >= incumbent;
}

/// <summary>Smallest sample within the window; see <see cref="WindowedExtremum"/>.</summary>
internal sealed class WindowedMin(TimeSpan window) : WindowedExtremum(window)
{
    protected override bool Supersedes(double candidate, double incumbent) => candidate <= incumbent;
}
