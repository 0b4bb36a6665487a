namespace Indexing.Measurement;

/// <summary>What one measured run does: a rebuild with one of the three strategies, reading alone, or one of the bounds.</summary>
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

    /// <summary>
    /// Bound of the bound: Lucene.Net alone on the same documents. Their field values are extracted
    /// before the clock starts, then added with AddDocument into a fresh writer with the same
    /// analyzer, settings and indexing threads (<see cref="Indexing.Indexer.LuceneOnlyBuild"/>),
    /// timed like <see cref="IndexOnly"/>: no open or close inside, the final commit included.
    /// IndexOnly over it is the project's own indexing overhead. Not part of the rebuild bound (no
    /// rebuild can skip reading and extracting).
    /// </summary>
    LuceneOnly,
}
