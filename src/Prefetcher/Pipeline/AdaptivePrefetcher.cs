using System.Runtime.CompilerServices;

namespace Indexing.Prefetcher;

/// <summary>
/// Reads every document of a snapshot ahead of the indexer, with as many parallel reads as pay
/// off, and hands the indexer whatever is ready.
/// <para>
/// Owns the read source (from <see cref="Start"/> on; disposed once, when reading ends), a planner
/// thread that cuts the metadata scan into byte-balanced read tasks and issues them (budget, then
/// MB/s cap, then a concurrency slot), dedicated reader threads, and a tick loop in which the
/// <see cref="ConcurrencyController"/> sets L and the task size from what the last tick measured.
/// Completed reads are published in completion order, so a giant document being read never holds
/// back small ones already read.
/// </para>
/// <para>
/// Files: this one (entry, consumer API, live limits, disposal); <c>.Reading.cs</c> (planner and
/// reader threads); <c>.Control.cs</c> (the tick: signals, decision, pressure view).
/// Threading: one consumer takes; <see cref="UpdateLimits"/>, <see cref="Pressure"/> and
/// <see cref="DisposeAsync"/> from any thread.
/// </para>
/// </summary>
public sealed partial class AdaptivePrefetcher : IBatchSource
{
    public const string StrategyName = "adaptive";

    private readonly PrefetchRun _run;
    private readonly PrefetchOptions _options;
    private readonly ConcurrencyController _controller;
    private readonly ConcurrencyGate _gate;
    private readonly ByteRateLimiter _rate;
    private readonly ReadWorkerPool _workers;
    private readonly PlannedTasks _plan;
    private readonly Thread _planner;
    private readonly Lock _limitsLock = new();
    private PrefetchLimits _limits;
    private int _decidedConcurrency;
    private long _targetTaskBytes;

    private AdaptivePrefetcher(IDocumentReadSource source, PrefetchOptions options, CancellationToken cancellationToken)
    {
        _options = options;
        _run = new PrefetchRun(StrategyName, source, options, cancellationToken);
        _controller = new ConcurrencyController(options.Controller);
        _limits = options.InitialLimits;
        _decidedConcurrency = _controller.Concurrency;
        _targetTaskBytes = _controller.TargetTaskBytes;
        _gate = new ConcurrencyGate(EffectiveConcurrency(_decidedConcurrency, _limits));
        _rate = new ByteRateLimiter(_limits.MaxBytesPerSecond);
        _workers = new ReadWorkerPool("Prefetch reader", options.Controller.MaxConcurrency, ReadOne, _run.ReaderStarted, _run.ReaderExited, _run.Fail);
        _plan = new PlannedTasks(source, PlanOptions.ForBudget(options.BudgetBytes), () => Volatile.Read(ref _targetTaskBytes), _run.Meter);
        _planner = new Thread(PlanAndIssue) { IsBackground = true, Name = "Prefetch planner" };
    }

    /// <inheritdoc />
    public PrefetchPressure Pressure => _run.Meter.Latest;

    /// <inheritdoc />
    public long SnapshotEtag => _run.SnapshotEtag;

    /// <inheritdoc />
    public string? HandedOutThrough => _run.Ready.HandedOutThrough;

    /// <summary>The live limits in force.</summary>
    public PrefetchLimits Limits => Volatile.Read(ref _limits);

    internal PrefetchState State => _run.State;

    internal ByteBudget Budget => _run.Budget;

    /// <summary>Reads holding a concurrency slot now (issued to a reader and not yet finished).</summary>
    internal int RunningReads => _gate.Running;

    /// <summary>Completes when the last reader stopped and the source was released.</summary>
    internal Task ReadersStopped => _run.ReadersStopped;

    /// <summary>The planner and every reader thread started so far.</summary>
    internal IReadOnlyList<Thread> Threads => [_planner, .. _workers.Threads];

    /// <summary>
    /// Validates <paramref name="options"/>, then takes ownership of <paramref name="source"/> and
    /// starts reading. <paramref name="cancellationToken"/> stops the run like <see cref="DisposeAsync"/>
    /// does, except that the prefetcher stays readable (its pressure) until disposed.
    /// </summary>
    internal static AdaptivePrefetcher Start(IDocumentReadSource source, PrefetchOptions options, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var prefetcher = new AdaptivePrefetcher(source, options, cancellationToken);
        prefetcher._run.ReaderStarted();
        prefetcher._run.Start(prefetcher.OnTick, prefetcher.View, prefetcher._workers.Stop, prefetcher.ReturnUnstarted);
        prefetcher._planner.Start();
        return prefetcher;
    }

    /// <inheritdoc />
    public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
        _run.TakeAsync(this, maxDocuments, maxBytes, onNothingReady: null, cancellationToken);

    /// <inheritdoc />
    public IAsyncEnumerable<PrefetchBatch> ReadAllAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
        BatchSources.ReadAllAsync(this, maxDocuments, maxBytes, cancellationToken);

    /// <summary>
    /// Changes the live limits (a rethrottle). Lowering revokes nothing: running reads finish and
    /// held bytes stay until taken; new reads wait until they fit the new limits.
    /// </summary>
    public void UpdateLimits(PrefetchLimits limits)
    {
        ArgumentNullException.ThrowIfNull(limits);
        ObjectDisposedException.ThrowIf(_run.IsDisposed, this);
        limits.Validate(_options.Controller.MaxConcurrency);
        lock (_limitsLock)
        {
            _run.Budget.SetLimit(limits.BudgetBytes);
            _rate.SetRate(limits.MaxBytesPerSecond);
            Volatile.Write(ref _limits, limits);
            _gate.SetLimit(EffectiveConcurrency(_decidedConcurrency, limits));
        }
    }

    /// <summary>
    /// Stops reading, releases the snapshot and all budget. Idempotent. A store Get or MultiGet cannot
    /// be interrupted, so readers stop when the store calls in flight return: the bound is the longest
    /// single call (the largest document's Get; 130 ms for 48 MiB here), not a fixed time.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        try
        {
            await _run.DisposeAsync(() => _run.ReadersStopped).ConfigureAwait(false);
        }
        finally
        {
            _gate.Dispose();
            _rate.Dispose();
        }
    }

    private static int EffectiveConcurrency(int decided, PrefetchLimits limits) => Math.Min(decided, limits.MaxConcurrency ?? int.MaxValue);
}

/// <summary>What every <see cref="IBatchSource"/> does the same way.</summary>
internal static class BatchSources
{
    public static async IAsyncEnumerable<PrefetchBatch> ReadAllAsync(
        IBatchSource source, int maxDocuments, long maxBytes, [EnumeratorCancellation] CancellationToken cancellationToken)
    {
        while (await source.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            yield return batch;
        }
    }
}
