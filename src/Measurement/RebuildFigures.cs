using System.Collections.Immutable;
using Indexing.Prefetcher;

namespace Indexing.Measurement;

/// <summary>
/// Everything one measured run produced. Prefetch figures are null for <see cref="RebuildMode.IndexOnly"/>
/// and <see cref="RebuildMode.LuceneOnly"/> (no prefetcher), the indexer's stall is null for
/// <see cref="RebuildMode.ReadOnly"/> (no indexer) and <see cref="RebuildMode.LuceneOnly"/> (nothing to wait for).
/// MB are decimal (10^6 bytes) of document bodies.
/// </summary>
/// <param name="IndexOnlyChunks">
/// <see cref="RebuildMode.IndexOnly"/> and <see cref="RebuildMode.LuceneOnly"/> only (null for the other modes): how many pieces its input
/// was held in. 1 when the whole collection fit in <see cref="RebuildWorkload.InMemoryLimitBytes"/>
/// and was held in memory before the clock started; more when the run loaded it chunk by chunk
/// (each at most the limit, or one larger document), with the loading time taken out of
/// <see cref="Elapsed"/> and <see cref="IndexerStall"/> (<see cref="IndexOnlyLoadingTime"/> says how much).
/// </param>
/// <param name="IndexOnlyLoadingTime">
/// <see cref="RebuildMode.IndexOnly"/> only (null for the other modes): the time the run spent
/// loading its input chunk by chunk, taken out of <see cref="Elapsed"/> and (clamped at zero) of
/// <see cref="IndexerStall"/>. <see cref="TimeSpan.Zero"/> when the whole collection was held in
/// memory before the clock started (<see cref="IndexOnlyChunks"/> is 1): nothing was loaded during
/// the run. <see cref="Elapsed"/> plus it is the time on the run's clock, loads included.
/// For <see cref="RebuildMode.LuceneOnly"/>: the time outside its clock during the run, the
/// extraction of the field values (and any chunk's loading) above all.
/// </param>
/// <param name="FixedConcurrency">
/// <see cref="RebuildMode.BestFixed"/> only (null for the other modes): the fixed L that won.
/// </param>
/// <param name="ProcessorTime">
/// The processor time the whole process used over the run's clock (every thread: readers, indexing
/// threads, Lucene's merges, the runtime, a foreground load's readers), with chunk loads taken out
/// as they are from <see cref="Elapsed"/>; for <see cref="RebuildMode.BestFixed"/>, the winning
/// run's. For <see cref="RebuildMode.LuceneOnly"/>, only its timed parts: the processor time spent
/// during the untimed extraction of field values, background merges that ran then included, is
/// left out with it. On a machine of few cores it says whether reading and indexing can overlap:
/// two runs whose processor times add up to more than the cores give in the longer one's wall time
/// cannot. Null when not measured.
/// </param>
/// <param name="Commits">
/// The commits the build made: the marker at its start, its bulk commits (checkpoints, on the cadence
/// <see cref="Indexing.Indexer.IndexOptions.BulkCommitShare"/> sets) and the last one. Null when
/// nothing was indexed (<see cref="RebuildMode.ReadOnly"/>, <see cref="RebuildMode.BestFixed"/>) and
/// for <see cref="RebuildMode.LuceneOnly"/>, which commits once, at the end.
/// </param>
/// <param name="BestFixedSweep">
/// <see cref="RebuildMode.BestFixed"/> only (empty for the other modes): every fixed L run, in the
/// order run, with its wall time and MB/s.
/// </param>
public sealed record RebuildFigures(
    RebuildMode Mode,
    string Device,
    TimeSpan Elapsed,
    long Documents,
    long Bytes,
    TimeSpan? IndexerStall,
    long? PeakInFlightAndBufferedBytes,
    long? LargestOversizedAdmissionBytes,
    long? BudgetBytes,
    double? MeanConcurrency,
    long PeakWorkingSetBytes,
    ImmutableArray<RebuildTimelinePoint> Timeline,
    ImmutableArray<PrefetchDecisionEntry> Decisions,
    ForegroundLatency? ForegroundIdle,
    ForegroundLatency? ForegroundDuringRebuild,
    int? IndexOnlyChunks = null,
    TimeSpan? IndexOnlyLoadingTime = null,
    int? FixedConcurrency = null,
    ImmutableArray<FixedConcurrencyRun> BestFixedSweep = default,
    GarbageCollections? CollectionsDuringRun = null,
    TimeSpan? ProcessorTime = null,
    long? Commits = null)
{
    /// <summary>Every fixed L the BestFixed sweep ran (empty for the other modes).</summary>
    public ImmutableArray<FixedConcurrencyRun> BestFixedSweep { get; init; } = BestFixedSweep.IsDefault ? [] : BestFixedSweep;

    public double DocumentsPerSecond => Documents / Elapsed.TotalSeconds;

    public double MegabytesPerSecond => Bytes / 1e6 / Elapsed.TotalSeconds;

    /// <summary>
    /// How long the run took to deliver 80% of its final rate: the end of the first second of its
    /// timeline whose mean MB/s reaches 0.8 x the mean MB/s from 50% to 90% of the run (the final
    /// rate, before the last reads drain). Null without a timeline of at least two seconds, or when
    /// it never got there.
    /// </summary>
    public TimeSpan? TimeTo80PercentOfFinalRate => RampTime(0.8);

    /// <summary>Share of the wall time the indexing threads waited for input, in percent; null without an indexer.</summary>
    public double? IndexerStallPercent => IndexerStall is { } stall ? stall / Elapsed * 100 : null;

    /// <summary>Cores busy on average over the run (<see cref="ProcessorTime"/> over <see cref="Elapsed"/>); null when not measured.</summary>
    public double? MeanCoresBusy => ProcessorTime is { } cpu ? cpu / Elapsed : null;

    /// <summary>Share of the wall time the runtime held every managed thread in a garbage collection pause, in percent.</summary>
    public double? GcPausePercent => CollectionsDuringRun is { } gc ? gc.PauseTime / Elapsed * 100 : null;

    /// <summary>See <see cref="TimeTo80PercentOfFinalRate"/>, for another fraction.</summary>
    public TimeSpan? RampTime(double fraction)
    {
        var samples = Timeline;
        if (samples.Length < 2 || samples[^1].Elapsed < TimeSpan.FromSeconds(2))
        {
            return null;
        }
        var end = samples[^1].Elapsed;
        var final = samples.Where(p => p.Elapsed >= end * 0.5 && p.Elapsed <= end * 0.9).Select(p => p.MegabytesPerSecond).DefaultIfEmpty(0).Average();
        if (final <= 0)
        {
            return null;
        }
        // Each sample covers the interval before it; a second is the samples within one second back.
        for (var i = 0; i < samples.Length; i++)
        {
            var from = samples[i].Elapsed - TimeSpan.FromSeconds(1);
            var second = samples.Where(p => p.Elapsed > from && p.Elapsed <= samples[i].Elapsed).ToList();
            if (samples[i].Elapsed >= TimeSpan.FromSeconds(1) && second.Average(p => p.MegabytesPerSecond) >= fraction * final)
            {
                return samples[i].Elapsed;
            }
        }
        return null;
    }

    /// <summary>
    /// The median of one figure over runs, as the benchmarks' columns and measure's report give it:
    /// the middle value, or the mean of the two middle ones for an even count. Runs without the
    /// figure (null) are left out; null when none has it.
    /// </summary>
    public static double? Median(IEnumerable<double?> values)
    {
        var sorted = values.OfType<double>().Order().ToArray();
        var middle = sorted.Length / 2;
        return sorted.Length == 0 ? null : sorted.Length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
}

/// <summary>One run of the BestFixed sweep: reading alone with L pinned.</summary>
public readonly record struct FixedConcurrencyRun(int Concurrency, TimeSpan Elapsed, double MegabytesPerSecond);

/// <summary>
/// One point of a run's timeline: a pressure snapshot the prefetcher published (at its ticks), at
/// the time it was published, its rates over the interval since the previous point; without a
/// prefetcher, every <see cref="RebuildWorkload.SampleInterval"/>.
/// </summary>
/// <param name="ConsumerWaitPercent">Share of the interval the consumer (the indexer's feeder, or the dropping sink) waited for documents.</param>
/// <param name="ForegroundP99">p99 of the foreground Gets that completed in the interval; null without load or Gets.</param>
public readonly record struct RebuildTimelinePoint(
    TimeSpan Elapsed,
    int ConcurrencyLimit,
    double MegabytesPerSecond,
    double ConsumerWaitPercent,
    long InFlightAndBufferedBytes,
    TimeSpan? ForegroundP99);

/// <summary>
/// Garbage collections over an interval, process-wide: how many of each generation and how long
/// the runtime paused every managed thread for them (the foreground Gets included, whatever their
/// thread priority). A p99 that rises while the p50 does not is often made of these pauses.
/// </summary>
public readonly record struct GarbageCollections(int Gen0, int Gen1, int Gen2, TimeSpan PauseTime)
{
    public static GarbageCollections Now() =>
        new(GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2), GC.GetTotalPauseDuration());

    public static GarbageCollections operator -(GarbageCollections later, GarbageCollections earlier) =>
        new(later.Gen0 - earlier.Gen0, later.Gen1 - earlier.Gen1, later.Gen2 - earlier.Gen2, later.PauseTime - earlier.PauseTime);

    /// <summary>The collections of any generation (a gen1 collection also counts in gen0's count, so this is gen0's).</summary>
    public int Count => Gen0;

    /// <summary>The mean pause per collection; zero without any.</summary>
    public TimeSpan MeanPause => Count == 0 ? TimeSpan.Zero : PauseTime / Count;
}

/// <summary>Foreground Get latency over one phase (modelled disk delay included on that device).</summary>
public readonly record struct ForegroundLatency(long Gets, TimeSpan P50, TimeSpan P99);
