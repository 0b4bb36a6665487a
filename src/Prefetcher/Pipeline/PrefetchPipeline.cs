using System.Runtime.ExceptionServices;

namespace Indexing.Prefetcher;

/// <summary>
/// Reads every document of a snapshot ahead of the indexer and hands it whatever is ready: the one
/// read pipeline behind all three strategies, which differ only in their <see cref="ReadPolicy"/>.
/// States: Planning → Running (the scan ended) → Completed, Cancelled or Failed, never to change
/// again. Shutdown: cancel the token, let every thread stop, return unstarted tasks, dispose the
/// source, complete the ready reads; disposing also stops the ticks and returns what was not taken.
/// </summary>
internal sealed partial class PrefetchPipeline : IBatchSource
{
    private readonly IDocumentReadSource _source;
    private readonly PrefetchOptions _options;
    private readonly ReadPolicy _policy;
    private readonly PrefetchMeter _meter;
    private readonly ReadyReads _ready;
    private readonly CancellationTokenSource _stop;
    private readonly CancellationToken _token;
    private readonly Lock _stateLock = new();
    private readonly TaskCompletionSource _readersStopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _disposed = new(TaskCreationOptions.RunContinuationsAsynchronously);

    // The device this adaptive prefetch reads, shared with the engine's other prefetches (null: none,
    // or a baseline or fixed L, which neither learn nor take a share); the lease ends when reading does.
    private readonly PrefetchDevice? _device;
    private readonly IDisposable? _deviceLease;
    private PrefetchState _state = PrefetchState.Planning;

    // Captured once, so that every take rethrows the same trace instead of appending to it.
    private ExceptionDispatchInfo? _failure;
    private Exception? _releaseFailure;
    private int _disposeStarted;
    private int _takenAny;

    private PrefetchPipeline(PrefetchStrategy strategy, IDocumentReadSource source, PrefetchOptions options, CancellationToken cancellationToken, PrefetchDevice? device)
    {
        _source = source;
        _options = options;

        // Read now: the consumer asks for it after the last batch, when the source is disposed.
        SnapshotEtag = source.SnapshotEtag;
        if (strategy == PrefetchStrategy.Adaptive && options.Controller.FixedConcurrency is null)
        {
            _device = device;
        }

        // Starts where the last prefetch reading the device alone settled, within its share while others read it too.
        _policy = new ReadPolicy(strategy, options, _device?.Remembered);
        _deviceLease = _device?.Join();
        var share = _device?.Share(options.Controller.MaxConcurrency) ?? int.MaxValue;
        Admission = new ReadAdmission(options.InitialLimits, Math.Min(_policy.InitialConcurrency, share), _policy.InitialCredits, options.SharedBudget);
        _meter = new PrefetchMeter(strategy.ToName(), Admission, options.HistoryLength);
        _ready = new ReadyReads(_meter, _policy, source.StartAfterId);
        _stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        _token = _stop.Token;
        _targetTaskBytes = _policy.Controller?.TargetTaskBytes ?? _policy.Plan.DefaultTaskBytes;
        _planner = new Thread(PlanAndIssue) { IsBackground = true, Name = "Prefetch planner" };
        _census = new Thread(Count) { IsBackground = true, Name = "Prefetch census" };
        _sizeDecayFactor = DocumentSizeHistogram.FactorForHalfLife(options.SizeHalfLife, options.TickInterval);
    }

    /// <summary>How this pipeline schedules its reads.</summary>
    public PrefetchStrategy Strategy => _policy.Strategy;

    /// <inheritdoc />
    public long SnapshotEtag { get; }

    /// <inheritdoc />
    public string? HandedOutThrough => _ready.HandedOutThrough;

    /// <inheritdoc />
    public PrefetchPipeline Pipeline => this;

    /// <summary>The live limits in force.</summary>
    public PrefetchLimits Limits => Admission.Limits;

    internal PrefetchState State
    {
        get
        {
            lock (_stateLock)
            {
                return _state;
            }
        }
    }

    internal ReadAdmission Admission { get; }

    /// <summary>The device this adaptive prefetch reads and learns about; null when it has none.</summary>
    internal PrefetchDevice? Device => _device;

    /// <summary>Completes when the last thread stopped and the source was released.</summary>
    internal Task ReadersStopped => _readersStopped.Task;

    private bool IsDisposed => Volatile.Read(ref _disposeStarted) != 0;

    /// <summary>
    /// Validates <paramref name="options"/> (the caller still owns the source if they are invalid), then
    /// owns <paramref name="source"/> and starts reading. The token stops the run as disposing does.
    /// </summary>
    /// <param name="device">The device <paramref name="source"/> reads, shared with the engine's other prefetches; null: none.</param>
    internal static PrefetchPipeline Start(
        PrefetchStrategy strategy, IDocumentReadSource source, PrefetchOptions options, CancellationToken cancellationToken = default, PrefetchDevice? device = null)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var pipeline = new PrefetchPipeline(strategy, source, options, cancellationToken, device);
        pipeline.StartThreads();
        return pipeline;
    }

    /// <inheritdoc />
    public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
    {
        ThrowIfUnusable(atEnd: false);
        Volatile.Write(ref _takenAny, 1);
        if (await _ready.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            return batch;
        }

        _stopTicks.Cancel();
        Publish();
        ThrowIfUnusable(atEnd: true);
        return null;
    }

    /// <summary>
    /// Makes takes leave their bytes in the budget until <see cref="ReleaseTaken"/> returns them: a
    /// <see cref="SharedPass"/> holds a batch until its last reader has taken it, and the budget must
    /// count it meanwhile. Call before the first take; disposing still returns what was never taken.
    /// </summary>
    internal void DeferRelease()
    {
        if (Volatile.Read(ref _takenAny) != 0)
        {
            throw new InvalidOperationException("a prefetch's release can only be deferred before its first take.");
        }

        _ready.DeferRelease();
    }

    /// <summary>Returns <paramref name="bytes"/> taken under <see cref="DeferRelease"/> to the budget; any thread, also after disposal.</summary>
    internal void ReleaseTaken(long bytes) => Admission.Release(bytes);

    /// <summary>Changes the live limits (a rethrottle; lowering one revokes nothing).</summary>
    public void UpdateLimits(PrefetchLimits limits)
    {
        ArgumentNullException.ThrowIfNull(limits);
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        Admission.SetLimits(OptionProblems.ThrowIfInvalid(new PrefetchLimitsValidator(_options.Controller.MaxConcurrency), limits));
    }

    /// <summary>
    /// Stops reading once the store calls in flight return (a RocksDB call cannot be interrupted, so
    /// this waits for the longest one, a Get of the largest document; benchmarks/results/README.md,
    /// "Other figures", the shutdown bound) and releases
    /// the snapshot and all budget; idempotent. Throws a release failure the run could not report.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposeStarted, 1) != 0)
        {
            await _disposed.Task.ConfigureAwait(false);
            return;
        }

        try
        {
            _stop.Cancel();
            await _readersStopped.Task.ConfigureAwait(false);
            _stopTicks.Cancel();
            await _ticks.ConfigureAwait(false);
            _ready.DrainAndRelease();
            _deviceLease?.Dispose();
            Publish();
            _issued.Dispose();
            _stop.Dispose();
            if (UnreportedReleaseFailure() is { } releaseFailure)
            {
                ExceptionDispatchInfo.Throw(releaseFailure);
            }

            _disposed.TrySetResult();
        }
        catch (Exception exception)
        {
            _disposed.TrySetException(exception);
            throw;
        }
    }

    /// <summary>Records the first failure and stops the run; the consumer sees it after what was already read.</summary>
    private void Fail(Exception exception)
    {
        lock (_stateLock)
        {
            if (_failure is not null || _state is PrefetchState.Completed or PrefetchState.Cancelled)
            {
                return;
            }

            _failure = ExceptionDispatchInfo.Capture(exception);
            _state = PrefetchState.Failed;
        }

        _stop.Cancel();
    }

    private void SetRunning()
    {
        lock (_stateLock)
        {
            if (_state == PrefetchState.Planning)
            {
                _state = PrefetchState.Running;
            }
        }
    }

    // Threads may see the token and stop before the token's own callbacks ran, so whoever ends the
    // run decides from the token: cancelled (and not failed) means Cancelled, else every task was read.
    private void EndIfRunning()
    {
        lock (_stateLock)
        {
            if (_state is PrefetchState.Planning or PrefetchState.Running)
            {
                _state = _token.IsCancellationRequested ? PrefetchState.Cancelled : PrefetchState.Completed;
            }
        }
    }

    // A release failure that did not become the run's failure (it had ended) has nowhere else to go.
    private Exception? UnreportedReleaseFailure()
    {
        lock (_stateLock)
        {
            return _releaseFailure is { } failure && !ReferenceEquals(failure, _failure?.SourceException) ? failure : null;
        }
    }

    private void ThrowIfUnusable(bool atEnd)
    {
        ObjectDisposedException.ThrowIf(IsDisposed, this);
        lock (_stateLock)
        {
            if (_state == PrefetchState.Cancelled)
            {
                throw new OperationCanceledException("The prefetcher was cancelled before it finished reading.", _token);
            }

            // A failure is reported once what was read before it has been handed out.
            if (atEnd && _failure is { } failure)
            {
                failure.Throw();
            }
        }
    }
}
