namespace Indexing.Prefetcher;

/// <summary>
/// What the prefetcher measured during one controller tick, handed to
/// <see cref="ConcurrencyController.Decide"/>. Counters cover the tick only; levels (buffered, in
/// flight) are taken at its end.
/// </summary>
internal readonly record struct ControllerSignals
{
    /// <summary>End of the tick, as time since the pipeline started.</summary>
    public required TimeSpan Now { get; init; }

    /// <summary>Length of the tick (jittered; the controller works with the real length).</summary>
    public required TimeSpan TickDuration { get; init; }

    /// <summary>Bytes of documents whose reads completed during the tick.</summary>
    public long BytesDelivered { get; init; }

    public ReadOnlyMemory<ReadSample> Reads { get; init; }

    /// <summary>
    /// Reads in flight integrated over the tick (two reads for the whole tick: twice its length),
    /// over the same span as each read's latency, for Little's law; zero when not measured.
    /// </summary>
    public TimeSpan ReadsInFlightTime { get; init; }

    /// <summary>Share of the tick (0..1) the indexer spent waiting for input.</summary>
    public double ConsumerWaitFraction { get; init; }

    public long BufferedBytes { get; init; }

    public long InFlightBytes { get; init; }

    public long BudgetBytes { get; init; }

    /// <summary>The largest document of the size histogram's recent window; 0 when none.</summary>
    public long LargestRecentDocumentBytes { get; init; }

    /// <summary>The process is under memory pressure: do not add readers.</summary>
    public bool MemoryHigh { get; init; }

    /// <summary>
    /// The store's live p99 latency of foreground Gets: positive, or null when there were none
    /// (an empty window's summary reports 0: pass null then).
    /// </summary>
    public TimeSpan? ForegroundP99 { get; init; }

    /// <summary>The max MB/s setting, not the disk, is what limits reads now.</summary>
    public bool RateLimited { get; init; }

    /// <summary>The live concurrency limit; null: only <see cref="ControllerOptions.MaxConcurrency"/> applies.</summary>
    public int? MaxConcurrency { get; init; }
}

/// <summary>
/// One completed read as the controller sees it: the bytes it brought, its documents (one: a
/// Get; more: a MultiGet or a range read) and how long it took from issue to completion.
/// </summary>
internal readonly record struct ReadSample(long Bytes, int Documents, TimeSpan Latency);
