using System.Collections.Immutable;

namespace Indexing.Prefetcher;

/// <summary>Where a prefetcher is in its run.</summary>
public enum PrefetchState
{
    /// <summary>The metadata scan is still being planned into read tasks (planned totals still grow).</summary>
    Planning,

    /// <summary>Every task is planned; reads are still running or queued.</summary>
    Running,

    /// <summary>Every planned document was read and handed to the buffer; the snapshot is released. The consumer may still be taking.</summary>
    Completed,

    /// <summary>Cancelled or disposed before completion.</summary>
    Cancelled,

    /// <summary>A read or the metadata scan failed; see <see cref="PrefetchPressure.Failure"/>.</summary>
    Failed,
}

/// <summary>
/// One immutable reading of a prefetcher's state, published every tick and at the end. MB are
/// decimal, MiB binary. "Done" counts what the consumer took, "Read" what reads delivered;
/// "Planned" grows as the scan is cut lazily, so it is exact only once <see cref="PlanComplete"/>;
/// "Total" is counted beside it, within seconds of the start.
/// </summary>
public sealed record PrefetchPressure
{
    /// <summary>The prefetch's name in its engine (<c>rebuild &lt;index&gt;</c> for a rebuild's bulk prefetch); empty until the engine names it.</summary>
    public string Name { get; init; } = string.Empty;

    /// <summary>Its live limits (budget, concurrency cap, rate cap) as the engine reads them; null for the fixed strategies, which have none.</summary>
    public PrefetchLimits? Limits { get; init; }

    /// <summary>
    /// When one read of the collection feeds several rebuilds (a shared pass), the indexes it feeds, in
    /// the order they joined; null when it feeds one. The read figures are then the pass's, shared by
    /// all; <see cref="DocumentsDone"/>, <see cref="BytesDone"/> and the totals are this rebuild's own.
    /// </summary>
    public IReadOnlyList<string>? SharedBy { get; init; }

    public DateTimeOffset Timestamp { get; init; }

    /// <summary>Time since the prefetcher started.</summary>
    public TimeSpan Elapsed { get; init; }

    public PrefetchState State { get; init; }

    /// <summary>"adaptive", "fixed-batch" or "sequential".</summary>
    public required string Strategy { get; init; }

    /// <summary>Reads running now.</summary>
    public int Concurrency { get; init; }

    /// <summary>Reads allowed at once now (L).</summary>
    public int ConcurrencyLimit { get; init; }

    /// <summary>Time-weighted mean of <see cref="ConcurrencyLimit"/> since the start.</summary>
    public double MeanConcurrencyLimit { get; init; }

    public long InFlightBytes { get; init; }

    public long BufferedBytes { get; init; }

    public long BudgetBytes { get; init; }

    /// <summary>Largest in-flight + buffered seen, except a lone oversized admission (see <see cref="LargestOversizedAdmissionBytes"/>).</summary>
    public long HighWaterMarkBytes { get; init; }

    /// <summary>Largest reservation admitted alone because it exceeded the whole budget; 0 if none.</summary>
    public long LargestOversizedAdmissionBytes { get; init; }

    /// <summary>Completed reads not yet (fully) taken by the consumer.</summary>
    public int QueuedBatches { get; init; }

    public double MegabytesPerSecondLastSecond { get; init; }

    public double MegabytesPerSecondLast10Seconds { get; init; }

    public double DocumentsPerSecondLastSecond { get; init; }

    public double DocumentsPerSecondLast10Seconds { get; init; }

    /// <summary>Median read latency per MiB read, over the most recent reads; null before any.</summary>
    public TimeSpan? ReadLatencyPerMiBP50 { get; init; }

    public TimeSpan? ReadLatencyPerMiBP99 { get; init; }

    public long DocumentSizeP50Bytes { get; init; }

    public long DocumentSizeP99Bytes { get; init; }

    /// <summary>Largest document read recently (the size histogram's recent window).</summary>
    public long DocumentSizeMaxBytes { get; init; }

    public string? LargestRecentDocumentId { get; init; }

    /// <summary>Share of the last 10 s the consumer spent waiting for documents, in percent.</summary>
    public double ConsumerWaitPercent { get; init; }

    /// <summary>Share of the last 10 s the planner spent waiting for budget before it could issue a read, in percent.</summary>
    public double ProducerBlockedPercent { get; init; }

    /// <summary>Total time the consumer waited since the start.</summary>
    public TimeSpan ConsumerWaitTime { get; init; }

    /// <summary>Takes that had to wait because nothing was ready.</summary>
    public long StallCount { get; init; }

    /// <summary>The controller's last decision kind ("start", "grow", "cut", "hold"); null for fixed strategies.</summary>
    public string? LastDecision { get; init; }

    public string? LastDecisionReason { get; init; }

    public bool ThrottledByForeground { get; init; }

    /// <summary>Foreground Get p99 over the last second; null when not watched or no Gets.</summary>
    public TimeSpan? ForegroundP99 { get; init; }

    /// <summary>The MB/s cap in force, in bytes per second; null = none.</summary>
    public long? MaxBytesPerSecond { get; init; }

    public long DocumentsDone { get; init; }

    public long BytesDone { get; init; }

    public long DocumentsRead { get; init; }

    public long BytesRead { get; init; }

    public long DocumentsPlanned { get; init; }

    public long BytesPlanned { get; init; }

    /// <summary>The metadata scan ended: planned totals are exact.</summary>
    public bool PlanComplete { get; init; }

    /// <summary>The run's documents (the snapshot's, after the start key), counted beside the planning; null until counted.</summary>
    public long? DocumentsTotal { get; init; }

    /// <summary>The run's bytes, counted with <see cref="DocumentsTotal"/>; null until counted.</summary>
    public long? BytesTotal { get; init; }

    /// <summary>The run's documents as known now: <see cref="DocumentsTotal"/> once counted, else <see cref="DocumentsPlanned"/> so far (a lower bound).</summary>
    public long DocumentsKnown => DocumentsTotal ?? DocumentsPlanned;

    /// <summary>The run's bytes as known now: <see cref="BytesTotal"/> once counted, else <see cref="BytesPlanned"/> so far (a lower bound).</summary>
    public long BytesKnown => BytesTotal ?? BytesPlanned;

    public long DocumentsRemaining => DocumentsKnown - DocumentsDone;

    public long BytesRemaining => BytesKnown - BytesDone;

    /// <summary>Remaining bytes at the last 10 s rate; null until the total is counted or before anything was taken.</summary>
    public TimeSpan? Eta { get; init; }

    /// <summary>The failure's message when <see cref="State"/> is Failed.</summary>
    public string? Failure { get; init; }

    /// <summary>One point per second, oldest first, for the configured history length (~5 minutes).</summary>
    public ImmutableArray<PrefetchPressurePoint> History { get; init; } = [];

    /// <summary>The controller's recent decisions that changed something, oldest first.</summary>
    public ImmutableArray<PrefetchDecisionEntry> RecentDecisions { get; init; } = [];
}

/// <summary>One second of a prefetcher's history.</summary>
public readonly record struct PrefetchPressurePoint(
    TimeSpan Elapsed,
    int Concurrency,
    int ConcurrencyLimit,
    double MegabytesPerSecond,
    long InFlightBytes,
    long BufferedBytes,
    double ConsumerWaitPercent,
    TimeSpan? ForegroundP99,
    long DocumentSizeP50Bytes,
    long DocumentSizeP99Bytes,
    long DocumentSizeMaxBytes);

/// <summary>One remembered controller decision: when (time since start), the L chosen, its kind and why.</summary>
public readonly record struct PrefetchDecisionEntry(TimeSpan Elapsed, int ConcurrencyLimit, string Kind, string Reason);
