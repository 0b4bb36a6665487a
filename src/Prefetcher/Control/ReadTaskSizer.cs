namespace Indexing.Prefetcher;

/// <summary>
/// Sizes read tasks to about <see cref="ControllerOptions.TargetTaskDuration"/> of I/O for one
/// stream: long enough to amortise the per-request latency of a network disk, short enough that
/// the indexer gets data steadily and a cut takes effect quickly.
/// <para>
/// Per-stream throughput is the windowed maximum of (bytes delivered per second / concurrency):
/// like BBR's bandwidth estimate, the maximum ignores ticks in which readers were held back by a
/// full buffer or a slow indexer (app-limited), which would otherwise shrink tasks for no reason.
/// </para>
/// Not thread-safe: owned by the controller's tick loop (simulations use it on its own for runs
/// at a fixed concurrency, so both size tasks the same way).
/// </summary>
internal sealed class ReadTaskSizer
{
    private readonly ControllerOptions _options;
    private readonly WindowedExtremum _perStreamBytesPerSecond;

    public ReadTaskSizer(ControllerOptions options)
    {
        _options = options.Validate();
        _perStreamBytesPerSecond = WindowedExtremum.Max(options.TaskSizingWindow);
    }

    /// <summary>
    /// Records one tick's delivery by <paramref name="concurrency"/> readers: the readers whose
    /// reads completed in the tick, which after a change of L includes those issued under the old
    /// one (the controller passes the larger of the two).
    /// </summary>
    public void Observe(TimeSpan now, long bytesDelivered, TimeSpan tickDuration, int concurrency)
    {
        if (bytesDelivered > 0 && tickDuration > TimeSpan.Zero && concurrency > 0)
        {
            _perStreamBytesPerSecond.Add(now, bytesDelivered / tickDuration.TotalSeconds / concurrency);
        }
    }

    public double? PerStreamBytesPerSecond(TimeSpan now) => _perStreamBytesPerSecond.Current(now);

    /// <summary>
    /// Target size of the next task. Besides the [min, max] bounds, tasks of all readers together
    /// stay within half of the budget, so that reads in flight never crowd out the buffer the
    /// indexer draws from; the minimum still wins, as tiny tasks would waste the device.
    /// </summary>
    public long TargetBytes(TimeSpan now, int concurrency, long budgetBytes)
    {
        var bytes = PerStreamBytesPerSecond(now) is { } perStream
            ? (long)(perStream * _options.TargetTaskDuration.TotalSeconds)
            : _options.InitialTaskBytes;
        if (budgetBytes > 0)
        {
            bytes = Math.Min(bytes, budgetBytes / (2L * Math.Max(1, concurrency)));
        }
        return Math.Clamp(bytes, _options.MinTaskBytes, _options.MaxTaskBytes);
    }
}
