namespace Indexing.Prefetcher;

/// <summary>
/// Baseline without overlap: a take that finds nothing ready asks for the next fixed-count batch
/// and waits while it is read; nothing is read while the consumer indexes. The disk idles while the
/// indexer works and the indexer idles while the disk reads: the loop the adaptive prefetcher
/// replaced. See <see cref="BaselinePrefetcher"/>.
/// </summary>
internal sealed class SequentialPrefetcher : BaselinePrefetcher
{
    public const string StrategyName = "sequential";

    // 1 from a take's request until the consumer begins the batch it asked for: a take cancelled while
    // waiting must not make the next take ask again and get two batches read back to back.
    private int _requested;
    private Action? _requestNextBatch;

    private SequentialPrefetcher(IDocumentReadSource source, PrefetchOptions options, int batchDocuments, CancellationToken cancellationToken)
        : base(StrategyName, source, options, batchDocuments, initialPermits: 0, cancellationToken)
    {
    }

    private protected override Action OnNothingReady => _requestNextBatch ??= RequestNextBatch;

    /// <summary>Validates, then takes ownership of <paramref name="source"/>; reading starts with the first take.</summary>
    public static SequentialPrefetcher Start(
        IDocumentReadSource source, PrefetchOptions options, int batchDocuments = DefaultBatchDocuments, CancellationToken cancellationToken = default) =>
        Started(new SequentialPrefetcher(source, options, batchDocuments, cancellationToken));

    private protected override void OnReadStarted() => Volatile.Write(ref _requested, 0);

    private void RequestNextBatch()
    {
        if (Interlocked.Exchange(ref _requested, 1) == 0)
        {
            Reader.Permit();
        }
    }
}
