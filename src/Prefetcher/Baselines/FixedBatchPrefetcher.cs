namespace Indexing.Prefetcher;

/// <summary>
/// Baseline with single prefetch: the reader reads the next fixed-count batch while the consumer
/// indexes the current one, and starts the batch after that only once the consumer has begun on
/// the one it read. It assumes uniform document sizes: a batch holding a giant takes long to read,
/// and the consumer stalls. See <see cref="BaselinePrefetcher"/>.
/// </summary>
internal sealed class FixedBatchPrefetcher : BaselinePrefetcher
{
    public const string StrategyName = "fixed-batch";

    // The first batch is permitted at once; each later one when the consumer begins the one before.
    private FixedBatchPrefetcher(IDocumentReadSource source, PrefetchOptions options, int batchDocuments, CancellationToken cancellationToken)
        : base(StrategyName, source, options, batchDocuments, initialPermits: 1, cancellationToken)
    {
    }

    /// <summary>Validates, then takes ownership of <paramref name="source"/> and starts reading ahead.</summary>
    public static FixedBatchPrefetcher Start(
        IDocumentReadSource source, PrefetchOptions options, int batchDocuments = DefaultBatchDocuments, CancellationToken cancellationToken = default) =>
        Started(new FixedBatchPrefetcher(source, options, batchDocuments, cancellationToken));

    private protected override void OnReadStarted() => Reader.Permit();
}
