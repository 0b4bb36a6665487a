namespace Indexing.Prefetcher;

/// <summary>
/// The queueing signal: how much longer recent reads took than the same reads un-queued. One
/// baseline of latency per MiB, set by the giants, made ordinary batches look like 3-5x queueing, so
/// each size class (half-octaves, one document or several) keeps its own: the windowed minimum of
/// its per-tick medians. The evidence is a ratio of sums, which weights each read by its time, so
/// a FIFO queue reads L / depth whatever the sizes; queueing must also show in most classes with
/// enough reads, as one class's slow reads (cold MultiGets) are not a queue. The run's first tasks
/// (the ramp) teach no class: read at the initial L, alone on the device and the cores, their 2
/// MiB class is the one the measured target falls in, and reads at the device's depth then take
/// twice that un-queued time from CPU contention while L still pays, which set off false queueing
/// cuts (docs/decisions/0003). They still count in what the window delivered.
/// </summary>
internal sealed class ReadLatencyBaseline
{
    /// <summary>Reads the evidence is judged over: the current tick and those before it within this time.</summary>
    public static readonly TimeSpan JudgeWindow = TimeSpan.FromSeconds(1);

    /// <summary>Fewer reads than this in the window say nothing about queueing (one slow read is not a queue).</summary>
    public const int MinReads = 3;

    /// <summary>A class with fewer reads than this in the window takes part in the ratio but has no say of its own.</summary>
    public const int MinReadsPerClass = 2;

    // Half-octaves of a long (up to 2 x 63) x {several documents, one document}.
    private const int ClassCount = 2 * 128;

    private readonly TimeSpan _window;
    private readonly WindowedExtremum?[] _ticksPerByte = new WindowedExtremum?[ClassCount];
    private readonly Queue<(TimeSpan At, ReadSample Read)> _recent = new();
    private readonly Queue<(TimeSpan At, TimeSpan Duration, TimeSpan InFlight)> _recentTicks = new();

    /// <param name="window">How long a class's un-queued latency is remembered (<see cref="ControllerOptions.LatencyBaselineWindow"/>).</param>
    public ReadLatencyBaseline(TimeSpan window)
    {
        ArgumentOutOfRangeException.ThrowIfLessThanOrEqual(window, TimeSpan.Zero);
        _window = window;
    }

    /// <summary>The class of a read of <paramref name="bytes"/> (at least 1) in <paramref name="documents"/> documents.</summary>
    public static int ClassOf(long bytes, int documents) =>
        (2 * (int)Math.Floor(2 * Math.Log2(bytes))) + (documents == 1 ? 1 : 0);

    /// <summary>The un-queued latency per byte of a class, in ticks; null when it has no reads in the window.</summary>
    public double? TicksPerByte(int sizeClass, TimeSpan now) => _ticksPerByte[sizeClass]?.Current(now);

    /// <summary>
    /// Learns from the reads that completed in the tick ending at <paramref name="now"/>, and from
    /// how long reads were in flight in it (<paramref name="readsInFlightTime"/> over
    /// <paramref name="tickDuration"/>: the mean number in flight), for the window's throughput.
    /// </summary>
    public void Observe(TimeSpan now, ReadOnlySpan<ReadSample> reads, TimeSpan tickDuration = default, TimeSpan readsInFlightTime = default)
    {
        while (_recent.TryPeek(out var oldest) && oldest.At <= now - JudgeWindow)
        {
            _recent.Dequeue();
        }
        while (_recentTicks.TryPeek(out var oldestTick) && oldestTick.At <= now - JudgeWindow)
        {
            _recentTicks.Dequeue();
        }
        if (tickDuration > TimeSpan.Zero)
        {
            _recentTicks.Enqueue((now, tickDuration, readsInFlightTime));
        }
        var tick = new List<(int Class, double TicksPerByte)>(reads.Length);
        foreach (var read in reads)
        {
            if (read.Bytes > 0 && read.Latency > TimeSpan.Zero)
            {
                _recent.Enqueue((now, read));
                if (!read.Ramp)
                {
                    tick.Add((ClassOf(read.Bytes, read.Documents), (double)read.Latency.Ticks / read.Bytes));
                }
            }
        }
        // Per class, the tick's median: one read of a kind says little, a minimum of single reads
        // would keep the luckiest one for the whole window.
        foreach (var sizeClass in tick.GroupBy(read => read.Class))
        {
            var sorted = sizeClass.Select(read => read.TicksPerByte).Order().ToList();
            (_ticksPerByte[sizeClass.Key] ??= WindowedExtremum.Min(_window)).Add(now, sorted[sorted.Count / 2]);
        }
    }

    /// <summary>How the reads of the last <see cref="JudgeWindow"/> compare with their un-queued time; null with too few.</summary>
    public QueueingEvidence? Judge(TimeSpan now)
    {
        var judged = new List<(int Class, double Latency, double Unqueued)>(_recent.Count);
        foreach (var (_, read) in _recent)
        {
            var sizeClass = ClassOf(read.Bytes, read.Documents);
            if (!read.Ramp && TicksPerByte(sizeClass, now) is { } perByte)
            {
                judged.Add((sizeClass, read.Latency.Ticks, perByte * read.Bytes));
            }
        }
        var latency = judged.Sum(read => read.Latency);
        var expected = judged.Sum(read => read.Unqueued);
        if (judged.Count < MinReads || expected <= 0)
        {
            return null;
        }
        // The class inflation that more than half of the classes with enough reads reach.
        var inflations = judged.GroupBy(read => read.Class)
            .Where(sizeClass => sizeClass.Count() >= MinReadsPerClass)
            .Select(sizeClass => sizeClass.Sum(read => read.Latency) / sizeClass.Sum(read => read.Unqueued))
            .Order()
            .ToList();
        double? majority = inflations.Count > 0 ? inflations[(inflations.Count - 1) / 2] : null;
        return new QueueingEvidence(
            latency / expected,
            inflations.Count,
            majority,
            TimeSpan.FromTicks((long)(latency / judged.Count)),
            TimeSpan.FromTicks((long)(expected / judged.Count)),
            WindowBytesPerSecond());
    }

    /// <summary>
    /// What the window's reads delivered, by Little's law: the mean reads in flight x their bytes
    /// per second of latency. Over the same second as the latencies judged, so a device that
    /// changed shows at once, where a measurement since a plateau began mixes before and after;
    /// and a giant completing on either side of a tick edge does not move it. Null without reads
    /// in flight measured.
    /// </summary>
    private double? WindowBytesPerSecond()
    {
        var duration = _recentTicks.Sum(tick => tick.Duration.Ticks);
        var inFlight = _recentTicks.Sum(tick => tick.InFlight.Ticks);
        var bytes = _recent.Sum(read => (double)read.Read.Bytes);
        var seconds = _recent.Sum(read => read.Read.Latency.TotalSeconds);
        return duration > 0 && inFlight > 0 && seconds > 0 ? (double)inFlight / duration * bytes / seconds : null;
    }
}

/// <summary>What recent reads say about queueing (see <see cref="ReadLatencyBaseline"/>).</summary>
/// <param name="Inflation">Their time over the same reads' un-queued time (1 = no queueing).</param>
/// <param name="Classes">Size classes with enough reads to judge on their own.</param>
/// <param name="MajorityClassInflation">The inflation that more than half of those classes reach; null when none had enough reads.</param>
/// <param name="BytesPerSecond">What the same window's reads delivered (Little's law); null without reads in flight measured.</param>
internal readonly record struct QueueingEvidence(
    double Inflation, int Classes, double? MajorityClassInflation, TimeSpan MeanLatency, TimeSpan MeanUnqueued, double? BytesPerSecond = null)
{
    /// <summary>Reads queue: inflation above <paramref name="limit"/>, and most classes a quarter of the way there.</summary>
    public bool ShowsQueueing(double limit) =>
        Inflation > limit && MajorityClassInflation is { } majority && majority >= 1 + ((limit - 1) / 4);
}
