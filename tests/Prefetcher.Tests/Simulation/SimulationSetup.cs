namespace Indexing.Prefetcher.Tests;

/// <summary>One simulated indexing run: disk model, documents, budget, indexer speed, controller.</summary>
internal sealed record SimulationSetup
{
    public const long MiB = 1024 * 1024;

    public NetworkDiskModelOptions Disk { get; init; } = new();

    /// <summary>From this time on, reads go to a device with these parameters (another tenant took part of it); null = none.</summary>
    public (TimeSpan At, NetworkDiskModelOptions Disk)? DiskChange { get; init; }

    public DocumentShape Shape { get; init; } = DocumentShape.Uniform4K;

    /// <summary>Documents in the collection; null = endless (the run ends at <see cref="Duration"/>).</summary>
    public long? DocumentCount { get; init; }

    public TimeSpan Duration { get; init; } = TimeSpan.FromSeconds(60);

    public long BudgetBytes { get; init; } = 512 * MiB;

    /// <summary>
    /// The store's own time per document read, added to each read's latency outside the device's
    /// slots: what makes a MultiGet of many small documents cost more per byte than one large Get.
    /// </summary>
    public TimeSpan DocumentReadCost { get; init; }

    /// <summary>
    /// The CPU work of reading (checksums, copies of direct reads) after the device served a read:
    /// that many cores, each working through this many bytes a second, FIFO. Makes throughput bend
    /// gradually as L passes the knee, as on a real machine, instead of stopping sharply. Null = none.
    /// </summary>
    public (int Cores, double BytesPerSecondPerCore)? ReadCpu { get; init; }

    /// <summary>
    /// A stage of reading that all reads in flight share (the memory bandwidth and CPU work of
    /// direct reads on a small machine): a read submitted with n others in flight spends
    /// bytes x (n + 1) / this after the device. It has no knee: throughput bends gradually all
    /// the way up, as L / (1 + L / k) with k = this / the stream bandwidth (a doubling from k
    /// gains +33%, from 2k +20%, from 4k +11%), and the reads' latency grows with L. Null = none.
    /// </summary>
    public double? SharedStageBytesPerSecond { get; init; }

    /// <summary>How fast the indexer consumes bytes; infinity = the run is read-bound.</summary>
    public double IndexingBytesPerSecond { get; init; } = double.PositiveInfinity;

    /// <summary>Run at this concurrency (tasks still sized like the controller does) instead of adapting.</summary>
    public int? FixedConcurrency { get; init; }

    /// <summary>The controller as a real run gets it (default ceiling 64).</summary>
    public ControllerOptions Controller { get; init; } = new();

    /// <summary>Scripted foreground p99 from (virtual now, disk requests outstanding); null = no foreground traffic.</summary>
    public Func<TimeSpan, int, TimeSpan?>? ForegroundP99 { get; init; }

    /// <summary>Scripted live concurrency limit by virtual time; null = none.</summary>
    public Func<TimeSpan, int?>? LiveMaxConcurrency { get; init; }

    public TimeSpan Tick { get; init; } = TimeSpan.FromMilliseconds(250);

    /// <summary>Whether the largest recent document reaches the controller, as in the pipeline (off: as before sizes were an input).</summary>
    public bool SizesEnterController { get; init; } = true;

    /// <summary>Whether the ticks say how many reads were in flight (as the pipeline's do), so the controller measures throughput by Little's law.</summary>
    public bool LittlesLaw { get; init; } = true;

    /// <summary>Each tick lasts Tick x (1 ± this), drawn from the seeded random source.</summary>
    public double TickJitter { get; init; } = 0.1;

    public int Seed { get; init; } = 1;

    /// <summary>The first tick's interval (at most <see cref="Tick"/>), the pipeline's by default.</summary>
    public TimeSpan FirstTick { get; init; } = new PrefetchOptions().FirstTickInterval;

    /// <summary>Where a run before on the same device settled (<see cref="SimulationResult.Settled"/>): the controller starts there.</summary>
    public RememberedConcurrency? Remembered { get; init; }
}

/// <summary>What a simulated run delivered, and how concurrency moved.</summary>
internal sealed record SimulationResult(
    bool ReadBound,
    TimeSpan Elapsed,
    long BytesRead,
    double BytesConsumed,
    long DocumentsRead,
    TimeSpan ConsumerWaited,
    IReadOnlyList<(TimeSpan At, int Concurrency)> ConcurrencySteps,
    IReadOnlyList<(TimeSpan At, double BytesConsumed)> ConsumedAtTicks,
    IReadOnlyList<(TimeSpan At, ControllerDecision Decision)> Decisions,
    IReadOnlyList<(TimeSpan At, long TaskBytes)> TaskBytesAtTicks)
{
    public double BytesPerSecond => BytesConsumed / Elapsed.TotalSeconds;

    public double StallFraction => ConsumerWaited / Elapsed;

    /// <summary>The L and rate per stream of the run's last plateau (what a pipeline remembers for its device); null if none.</summary>
    public RememberedConcurrency? Settled { get; init; }

    /// <summary>
    /// The first tick at which the rate over the half second before it (from the last tick at or before
    /// its start; from the start of the run early on) reached <paramref name="share"/> of <paramref name="rate"/>; null if none did.
    /// </summary>
    public TimeSpan? TimeToReach(double share, double rate)
    {
        foreach (var (at, _) in ConsumedAtTicks.Skip(1))
        {
            var from = at > TimeSpan.FromSeconds(0.5) ? at - TimeSpan.FromSeconds(0.5) : TimeSpan.Zero;
            if (BytesPerSecondBetween(from, at) >= share * rate)
            {
                return at;
            }
        }

        return null;
    }

    /// <summary>Bytes consumed per second between two tick times.</summary>
    public double BytesPerSecondBetween(TimeSpan from, TimeSpan to)
    {
        var first = ConsumedAtTicks.Last(x => x.At <= from);
        var last = ConsumedAtTicks.Last(x => x.At <= to);
        return (last.BytesConsumed - first.BytesConsumed) / (last.At - first.At).TotalSeconds;
    }

    /// <summary>Time-weighted mean concurrency over [from, to).</summary>
    public double MeanConcurrency(TimeSpan from, TimeSpan to)
    {
        double weighted = 0;
        for (var i = 0; i < ConcurrencySteps.Count; i++)
        {
            var start = Max(ConcurrencySteps[i].At, from);
            var end = Min(i + 1 < ConcurrencySteps.Count ? ConcurrencySteps[i + 1].At : to, to);
            if (end > start)
            {
                weighted += (end - start).TotalSeconds * ConcurrencySteps[i].Concurrency;
            }
        }
        return weighted / (to - from).TotalSeconds;
    }

    /// <summary>Mean target task size over the ticks in [from, to).</summary>
    public double MeanTaskBytes(TimeSpan from, TimeSpan to) =>
        TaskBytesAtTicks.Where(x => x.At >= from && x.At < to).Average(x => (double)x.TaskBytes);

    public int MaxConcurrency(TimeSpan from, TimeSpan to) => ConcurrencySteps
        .Where((step, i) => step.At < to && (i + 1 == ConcurrencySteps.Count || ConcurrencySteps[i + 1].At > from))
        .Max(step => step.Concurrency);

    /// <summary>One line: MB/s, mean L, consumer stall (meaningless read-bound: an infinitely fast indexer always waits).</summary>
    public string Summary(string label) => FormattableString.Invariant(
        $"{label}: {BytesPerSecond / 1e6:0} MB/s, mean L {MeanConcurrency(TimeSpan.Zero, Elapsed):0.0}, consumer stall {(ReadBound ? "n/a" : FormattableString.Invariant($"{StallFraction * 100:0.0}%"))} ({BytesConsumed / 1e9:0.0} GB in {Elapsed.TotalSeconds:0.0} s)");

    private static TimeSpan Max(TimeSpan a, TimeSpan b) => a > b ? a : b;

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;
}
