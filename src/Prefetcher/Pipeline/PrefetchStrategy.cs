namespace Indexing.Prefetcher;

/// <summary>How a prefetcher schedules its reads; all three read through the same code.</summary>
public enum PrefetchStrategy
{
    /// <summary>Parallel byte-balanced reads, L set by the controller, whatever is ready handed out.</summary>
    Adaptive,

    /// <summary>Baseline: fixed-count batches, one read ahead of the consumer.</summary>
    FixedBatch,

    /// <summary>Baseline: fixed-count batches read only when the consumer asks (no overlap).</summary>
    Sequential,
}
