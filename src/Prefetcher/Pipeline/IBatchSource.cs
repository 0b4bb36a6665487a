using System.Runtime.CompilerServices;

namespace Indexing.Prefetcher;

/// <summary>
/// What the indexing loop consumes: batches of documents read from a snapshot, handed over as they
/// are ready, by <see cref="PrefetchPipeline"/> with any strategy or by an in-memory source. One
/// consumer: <see cref="TakeAsync"/> is not called again before the previous call completed.
/// </summary>
internal interface IBatchSource : IAsyncDisposable
{
    /// <summary>The latest pressure snapshot (immutable; cheap to read from any thread).</summary>
    PrefetchPressure Pressure { get; }

    /// <summary>Etag high-water mark of the snapshot being read: after the last batch, the change feed continues from it.</summary>
    long SnapshotEtag { get; }

    /// <summary>The last batch's <see cref="PrefetchBatch.HandedOutThrough"/>: what a rebuild checkpoints and resumes after.</summary>
    string? HandedOutThrough { get; }

    /// <summary>
    /// The prefetcher this source reads with: itself, or the one a wrapper reads through (a wrapper
    /// passes its inner source's on, so that a <see cref="SharedPass"/> over it can hold batches in that
    /// prefetcher's budget); null for sources in memory, which have no budget.
    /// </summary>
    PrefetchPipeline? Pipeline { get; }

    /// <summary>
    /// Returns ready documents, up to <paramref name="maxDocuments"/> and <paramref name="maxBytes"/>
    /// but at least one, waiting only while none is ready; null at the end. Throws
    /// <see cref="PrefetchReadException"/> after a read failed (once what was read before is handed
    /// out), <see cref="OperationCanceledException"/> once cancelled.
    /// </summary>
    ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default);
}

/// <summary>What every <see cref="IBatchSource"/> does the same way.</summary>
internal static class BatchSources
{
    /// <summary>
    /// The source's pressure as its engine names it: with <paramref name="name"/> and, for an adaptive
    /// prefetch, its live limits (the fixed strategies and in-memory sources have none).
    /// </summary>
    public static PrefetchPressure Describe(this IBatchSource source, string name) =>
        source.Pressure with
        {
            Name = name,
            Limits = source.Adaptive()?.Limits,
        };

    /// <summary>The adaptive prefetcher reading for <paramref name="source"/> (for a shared pass's reader, the pass's), whose live limits an engine changes; null for the fixed strategies and in-memory sources.</summary>
    public static PrefetchPipeline? Adaptive(this IBatchSource source) =>
        (source is SharedPass.Reader reader ? reader.Pass.Source : source).Pipeline is { Strategy: PrefetchStrategy.Adaptive } adaptive ? adaptive : null;

    /// <summary>Every batch until the end, each taken as by <see cref="IBatchSource.TakeAsync"/>.</summary>
    public static async IAsyncEnumerable<PrefetchBatch> ReadAllAsync(
        this IBatchSource source, int maxDocuments, long maxBytes, [EnumeratorCancellation] CancellationToken cancellationToken = default)
    {
        while (await source.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            yield return batch;
        }
    }
}
