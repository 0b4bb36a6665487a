namespace Indexing.Prefetcher;

/// <summary>
/// What the prefetcher measured during one controller tick (about 250 ms), handed to
/// <see cref="ConcurrencyController.Decide"/>. Counters cover the tick only; levels
/// (buffered, in flight) are taken at its end. A plain value: built and consumed on the tick loop.
/// </summary>
internal readonly record struct ControllerSignals
{
    /// <summary>End of the tick, as time since the pipeline started.</summary>
    public required TimeSpan Now { get; init; }

    /// <summary>Length of the tick (the caller jitters it; the controller works with the real length).</summary>
    public required TimeSpan TickDuration { get; init; }

    /// <summary>Bytes of documents whose reads completed during the tick.</summary>
    public long BytesDelivered { get; init; }

    public long DocumentsDelivered { get; init; }

    /// <summary>
    /// Every read that completed during the tick: its bytes, documents and latency. The queueing
    /// signal compares each with reads of its own size class (<see cref="ReadLatencyBaseline"/>).
    /// </summary>
    public ReadOnlyMemory<ReadSample> Reads { get; init; }

    /// <summary>
    /// The number of reads in flight integrated over the tick (two reads for the whole tick: twice
    /// its length), counted over the same span as each read's latency. Little's law turns it and
    /// the completed reads' bytes per second of latency into throughput; zero when not measured.
    /// </summary>
    public TimeSpan ReadsInFlightTime { get; init; }

    /// <summary>Share of the tick (0..1) the indexer spent waiting for input.</summary>
    public double ConsumerWaitFraction { get; init; }

    /// <summary>Bytes read and waiting for the indexer.</summary>
    public long BufferedBytes { get; init; }

    /// <summary>Bytes reserved by reads still in flight.</summary>
    public long InFlightBytes { get; init; }

    /// <summary>The byte budget buffered and in-flight bytes share.</summary>
    public long BudgetBytes { get; init; }

    /// <summary>
    /// The largest document read recently (the size histogram's recent window, 10 s by default);
    /// 0 when none was. Bounds L: L documents this large must fit the budget's large-document share.
    /// </summary>
    public long LargestRecentDocumentBytes { get; init; }

    /// <summary>The process is under memory pressure: do not add readers.</summary>
    public bool MemoryHigh { get; init; }

    /// <summary>
    /// The store's live p99 latency of foreground Gets: positive, or null when there were none.
    /// A LatencyHistogram summary of an empty window (Count 0) reports P99 = 0: pass null then;
    /// <see cref="ConcurrencyController.Decide"/> rejects zero or less as misuse. The first three
    /// samples only seed the idle baseline (its median filter): no target before them.
    /// </summary>
    public TimeSpan? ForegroundP99 { get; init; }

    /// <summary>A configured max MB/s rethrottle, not the disk, is what limits reads now.</summary>
    public bool RateLimited { get; init; }

    /// <summary>
    /// The live concurrency limit (an operator may lower or raise it at run time); null means only
    /// <see cref="ControllerOptions.MaxConcurrency"/> applies. The lower of the two wins.
    /// </summary>
    public int? MaxConcurrency { get; init; }
}
