namespace Indexing.Measurement;

/// <summary>What one measured run does: a rebuild with one of the three strategies, or one of the two bounds.</summary>
public enum RebuildMode
{
    /// <summary>Read a batch, index it, read the next: no overlap.</summary>
    Sequential,

    /// <summary>Fixed-size batches with one batch prefetched ahead (the approach the adaptive prefetcher replaced).</summary>
    FixedBatch,

    /// <summary>The adaptive prefetcher.</summary>
    Adaptive,

    /// <summary>
    /// The adaptive prefetcher into a sink that drops every batch: reading alone, with the
    /// controller choosing L. Judged against <see cref="BestFixed"/>; no longer a bound itself (a
    /// slow controller would lower the bound it is judged against).
    /// </summary>
    ReadOnly,

    /// <summary>
    /// Bound: indexing the same documents from memory (indexing alone); held in chunks, their
    /// loading timed out, over <see cref="RebuildWorkload.InMemoryLimitBytes"/>.
    /// </summary>
    IndexOnly,

    /// <summary>
    /// Bound: reading alone at the fastest fixed L of <see cref="RebuildWorkload.BestFixedConcurrencies"/>
    /// (the same pipeline and dropping sink as <see cref="ReadOnly"/>, L pinned), on the same
    /// snapshot contents and device. Its figures are the winning run's.
    /// </summary>
    BestFixed,
}
