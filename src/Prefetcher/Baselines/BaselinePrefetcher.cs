namespace Indexing.Prefetcher;

/// <summary>
/// What the two baselines share: fixed-count batches (N documents, whatever their bytes) read by
/// one <see cref="FixedCountReader"/> thread, through the same read code, budget accounting and
/// pressure as the adaptive prefetcher (concurrency fixed at 1; the MB/s cap and the foreground
/// signal are not applied). A subclass decides only when the next batch may be read.
/// <para>Threading: one reader thread, one consumer; Pressure and DisposeAsync from any thread.</para>
/// </summary>
internal abstract class BaselinePrefetcher : IBatchSource
{
    /// <summary>Documents per fixed-count batch unless the caller chooses: a typical fixed batch size.</summary>
    public const int DefaultBatchDocuments = 1024;

    /// <summary>Validates first: on an invalid argument the caller still owns <paramref name="source"/>.</summary>
    private protected BaselinePrefetcher(
        string strategy, IDocumentReadSource source, PrefetchOptions options, int batchDocuments, int initialPermits, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(batchDocuments, 1);
        options.Validate();
        Run = new PrefetchRun(strategy, source, options, cancellationToken, onReadStarted: OnReadStarted);
        Reader = new FixedCountReader(Run, source, batchDocuments, initialPermits, $"Prefetch {strategy} reader");
    }

    public PrefetchPressure Pressure => Run.Meter.Latest;

    public long SnapshotEtag => Run.SnapshotEtag;

    public string? HandedOutThrough => Run.Ready.HandedOutThrough;

    internal Thread ReaderThread => Reader.Thread;

    internal Task ReadersStopped => Run.ReadersStopped;

    private protected PrefetchRun Run { get; }

    private protected FixedCountReader Reader { get; }

    /// <summary>Called when a take finds nothing ready, before it waits; null = nothing to do.</summary>
    private protected virtual Action? OnNothingReady => null;

    public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
        Run.TakeAsync(this, maxDocuments, maxBytes, OnNothingReady, cancellationToken);

    public IAsyncEnumerable<PrefetchBatch> ReadAllAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
        BatchSources.ReadAllAsync(this, maxDocuments, maxBytes, cancellationToken);

    public ValueTask DisposeAsync() => Run.DisposeAsync(() => Run.ReadersStopped);

    /// <summary>Called when the consumer begins a batch (under the take's lock: keep it short).</summary>
    private protected abstract void OnReadStarted();

    /// <summary>Starts ticking and the reader thread; returns <paramref name="prefetcher"/>, now owning its source.</summary>
    private protected static T Started<T>(T prefetcher)
        where T : BaselinePrefetcher
    {
        prefetcher.Run.Start(() => prefetcher.Run.Meter.Tick(1), prefetcher.View);
        prefetcher.Reader.Start();
        return prefetcher;
    }

    private PressureView View() =>
        new(Reader.ReadingNow, ConcurrencyLimit: 1, MaxBytesPerSecond: null, ForegroundP99: null, Decision: null, Decisions: []);
}
