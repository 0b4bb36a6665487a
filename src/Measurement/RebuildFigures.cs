using System.Collections.Immutable;
using Indexing.Prefetcher;

namespace Indexing.Measurement;

/// <summary>
/// Everything one measured run produced. Prefetch figures are null for <see cref="RebuildMode.IndexOnly"/>
/// (no prefetcher), the indexer's stall is null for <see cref="RebuildMode.ReadOnly"/> (no indexer).
/// MB are decimal (10^6 bytes) of document bodies.
/// </summary>
/// <param name="IndexOnlyChunks">
/// <see cref="RebuildMode.IndexOnly"/> only (null for the other modes): how many pieces its input
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
    TimeSpan? IndexOnlyLoadingTime = null)
{
    public double DocumentsPerSecond => Documents / Elapsed.TotalSeconds;

    public double MegabytesPerSecond => Bytes / 1e6 / Elapsed.TotalSeconds;

    /// <summary>Share of the wall time the indexing threads waited for input, in percent; null without an indexer.</summary>
    public double? IndexerStallPercent => IndexerStall is { } stall ? stall / Elapsed * 100 : null;

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

/// <summary>One sample of a run's timeline (every <see cref="RebuildWorkload.SampleInterval"/>).</summary>
/// <param name="ConsumerWaitPercent">Share of the interval the consumer (the indexer's feeder, or the dropping sink) waited for documents.</param>
/// <param name="ForegroundP99">p99 of the foreground Gets that completed in the interval; null without load or Gets.</param>
public readonly record struct RebuildTimelinePoint(
    TimeSpan Elapsed,
    int ConcurrencyLimit,
    double MegabytesPerSecond,
    double ConsumerWaitPercent,
    long InFlightAndBufferedBytes,
    TimeSpan? ForegroundP99);

/// <summary>Foreground Get latency over one phase (modelled disk delay included on that device).</summary>
public readonly record struct ForegroundLatency(long Gets, TimeSpan P50, TimeSpan P99);
