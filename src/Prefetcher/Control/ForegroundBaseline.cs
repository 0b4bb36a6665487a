namespace Indexing.Prefetcher;

/// <summary>The foreground Gets' target: the one set, or a factor of the idle p99, the windowed minimum of those seen.</summary>
internal sealed class ForegroundBaseline(ControllerOptions options)
{
    private readonly WindowedExtremum _idleP99 = WindowedExtremum.Min(options.ForegroundBaselineWindow);
    private readonly double[] _lastThree = new double[3];
    private int _next;
    private int _filled;

    /// <summary>Learns from one tick's p99 (null: no foreground Gets this tick).</summary>
    public void Observe(TimeSpan now, TimeSpan? p99)
    {
        // A minimum of a noisy p99 drifts low and would make the target ever stricter: the median of
        // the last three drops single low outliers, and nothing enters before three are in (a first
        // low reading, a window with a few cache hits, would set the target for the whole window).
        if (p99 is not { } value)
        {
            return;
        }
        _lastThree[_next] = value.Ticks;
        _next = (_next + 1) % 3;
        _filled = Math.Min(_filled + 1, 3);
        if (_filled == 3)
        {
            var (a, b, c) = (_lastThree[0], _lastThree[1], _lastThree[2]);
            _idleP99.Add(now, Math.Max(Math.Min(a, b), Math.Min(Math.Max(a, b), c)));
        }
    }

    /// <summary>The target at <paramref name="now"/>; <see cref="TimeSpan.MaxValue"/> while nothing is learned.</summary>
    public TimeSpan Target(TimeSpan now) =>
        options.ForegroundTarget
        ?? (_idleP99.Current(now) is { } idle ? TimeSpan.FromTicks((long)(idle * options.ForegroundTargetFactor)) : TimeSpan.MaxValue);

    /// <summary>Whether the idle p99 is still being learned: L must not rise fast before, or the target is learned under load.</summary>
    public bool Learning(TimeSpan now, TimeSpan? p99) => options.ForegroundTarget is null && p99 is not null && _idleP99.Current(now) is null;

    /// <summary>Whether <paramref name="p99"/> (null: no signal, never over) misses the target.</summary>
    public bool IsOver(TimeSpan now, TimeSpan? p99, out TimeSpan value, out TimeSpan target)
    {
        value = p99 ?? TimeSpan.Zero;
        target = Target(now);
        return p99 is not null && value > target;
    }
}
