namespace Indexing.Prefetcher;

/// <summary>
/// Sizes read tasks to about <see cref="ControllerOptions.TargetTaskDuration"/> of I/O for one
/// stream: long enough to amortise a per-request latency, short enough for steady data and quick
/// cuts. Per-stream throughput is a windowed maximum, like BBR's, so that ticks in which the
/// readers were held back do not shrink tasks.
/// </summary>
internal sealed class ReadTaskSizer(ControllerOptions options)
{
    private readonly ControllerOptions _options = options.Validate();
    private readonly WindowedExtremum _perStreamBytesPerSecond = WindowedExtremum.Max(options.TaskSizingWindow);

    /// <summary>
    /// Starts from a rate per stream measured before (on the same device, by an earlier prefetch): it
    /// sizes the first tasks until this run's own ticks pass it or the window forgets it.
    /// </summary>
    public void Seed(double streamBytesPerSecond)
    {
        if (streamBytesPerSecond is > 0 and < double.PositiveInfinity)
        {
            _perStreamBytesPerSecond.Add(TimeSpan.Zero, streamBytesPerSecond);
        }
    }

    /// <summary>The bytes per second one stream reads (the window's maximum); null before anything was measured.</summary>
    public double? StreamBytesPerSecond(TimeSpan now) => _perStreamBytesPerSecond.Current(now);

    /// <summary>Records one tick's delivery by <paramref name="concurrency"/> readers.</summary>
    public void Observe(TimeSpan now, long bytesDelivered, TimeSpan tickDuration, int concurrency)
    {
        if (bytesDelivered > 0 && tickDuration > TimeSpan.Zero && concurrency > 0)
        {
            _perStreamBytesPerSecond.Add(now, bytesDelivered / tickDuration.TotalSeconds / concurrency);
        }
    }

    /// <summary>
    /// Target size of the next task. All readers' tasks stay within half of the budget, so reads in
    /// flight never crowd out the indexer's buffer; the minimum still wins (tiny tasks waste the device).
    /// </summary>
    public long TargetBytes(TimeSpan now, int concurrency, long budgetBytes)
    {
        var bytes = _perStreamBytesPerSecond.Current(now) is { } perStream
            ? (long)(perStream * _options.TargetTaskDuration.TotalSeconds)
            : _options.InitialTaskBytes;
        if (budgetBytes > 0)
        {
            bytes = Math.Min(bytes, budgetBytes / (2L * Math.Max(1, concurrency)));
        }
        return Math.Clamp(bytes, _options.MinTaskBytes, _options.MaxTaskBytes);
    }
}
