using System.Runtime.ExceptionServices;

namespace Indexing.Prefetcher;

/// <summary>
/// The lifecycle every strategy shares, so the three differ only in how they schedule reads.
/// Owns: the read source (disposed exactly once, after the last reader stopped), the byte budget,
/// the meter, the ready reads, the run's cancellation (linked to the caller's token) and the tick
/// loop. The strategy owns its threads and tells the run when they start and stop.
/// <para>
/// States: Planning → Running (the scan ended) → Completed (the last reader stopped with every
/// task read). Cancellation (token or dispose) → Cancelled; the first failure → Failed. Terminal
/// states never change. Shutdown order: cancel the token (interrupts reads and waits), wait for the
/// readers to stop, return unstarted reservations, dispose the source, complete the ready reads;
/// on dispose also stop the ticks, release what was never taken, close the budget.
/// </para>
/// Threading: every member is thread-safe; state changes under one lock.
/// </summary>
internal sealed class PrefetchRun
{
    private readonly IDocumentReadSource _source;
    private readonly TaskReader _reader;
    private readonly CancellationTokenSource _stop;
    private readonly CancellationToken _token;
    private readonly Lock _stateLock = new();
    private readonly Lock _publishLock = new();
    private readonly TaskCompletionSource _readersStopped = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _disposed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TickLoop _ticks;
    private readonly double _sizeDecayFactor;
    private readonly long _snapshotEtag;
    private Action _onTick = static () => { };
    private Func<PressureView>? _view;
    private Action? _beforeSourceRelease;
    private PrefetchState _state = PrefetchState.Planning;
    private Exception? _failure;
    private ExceptionDispatchInfo? _failureDispatch;
    private Exception? _releaseFailure;
    private int _readers;
    private int _sourceReleased;
    private int _disposeStarted;

    public PrefetchRun(
        string strategy, IDocumentReadSource source, PrefetchOptions options, CancellationToken cancellationToken, Action? onReadStarted = null)
    {
        _source = source;

        // Read once, now: the consumer asks for it after the last batch, when the source is already disposed.
        _snapshotEtag = source.SnapshotEtag;
        Budget = new ByteBudget(options.BudgetBytes);
        Meter = new PrefetchMeter(strategy, Budget, options.HistoryLength);
        Ready = new ReadyReads(Meter, source.StartAfterId, onReadStarted);
        _reader = new TaskReader(source, Meter);
        _stop = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        _token = _stop.Token;
        _ticks = new TickLoop(options.TickInterval, options.TickJitterFraction, Tick, Fail);
        _sizeDecayFactor = DocumentSizeHistogram.FactorForHalfLife(options.SizeHalfLife, options.TickInterval);
    }

    public ByteBudget Budget { get; }

    public PrefetchMeter Meter { get; }

    public ReadyReads Ready { get; }

    public long SnapshotEtag => _snapshotEtag;

    /// <summary>Fires when the run is cancelled, disposed or failed: every wait and read observes it.</summary>
    public CancellationToken Token => _token;

    public PrefetchState State
    {
        get
        {
            lock (_stateLock)
            {
                return _state;
            }
        }
    }

    public bool IsDisposed => Volatile.Read(ref _disposeStarted) != 0;

    /// <summary>Completes once the last reader stopped and the source was released.</summary>
    public Task ReadersStopped => _readersStopped.Task;

    /// <summary>
    /// Starts ticking. <paramref name="onTick"/> is the strategy's per-tick work (the snapshot is
    /// published after it); <paramref name="view"/> supplies what only the strategy knows;
    /// <paramref name="onStop"/> runs once when the token fires; <paramref name="beforeSourceRelease"/>
    /// runs after the last reader stopped, before the source is disposed.
    /// </summary>
    public void Start(Action onTick, Func<PressureView> view, Action? onStop = null, Action? beforeSourceRelease = null)
    {
        _onTick = onTick;
        _view = view;
        _beforeSourceRelease = beforeSourceRelease;
        _token.Register(() =>
        {
            EndIfRunning();
            onStop?.Invoke();
        });
        Publish();
        _ticks.Start();
    }

    public void SetRunning()
    {
        lock (_stateLock)
        {
            if (_state == PrefetchState.Planning)
            {
                _state = PrefetchState.Running;
            }
        }
    }

    /// <summary>Records the first failure and stops the run; the consumer sees it after what was already read.</summary>
    public void Fail(Exception exception)
    {
        lock (_stateLock)
        {
            if (_failure is not null || _state is PrefetchState.Completed or PrefetchState.Cancelled)
            {
                return;
            }

            _failure = exception;

            // Captured once, so that every take rethrows the same trace instead of appending to it.
            _failureDispatch = ExceptionDispatchInfo.Capture(exception);
            _state = PrefetchState.Failed;
        }

        _stop.Cancel();
    }

    public void ReaderStarted() => Interlocked.Increment(ref _readers);

    public void ReaderExited()
    {
        if (Interlocked.Decrement(ref _readers) == 0)
        {
            ReleaseSource();
        }
    }

    /// <summary>
    /// The body of the thread that issues the plan (the planner, or a baseline's reader): hands each
    /// task to <paramref name="issue"/> (false = stop), then marks the plan done and calls
    /// <paramref name="planEnded"/>. Cancellation ends it quietly, a failure fails the run; either
    /// way the scan is released and the thread counted out.
    /// </summary>
    public void IssuePlan(PlannedTasks plan, Func<ReadTask, bool> issue, Action? planEnded = null)
    {
        try
        {
            while (plan.TryNext(_token, out var task))
            {
                if (!issue(task))
                {
                    return;
                }
            }

            SetRunning();
            planEnded?.Invoke();
        }
        catch (OperationCanceledException) when (_token.IsCancellationRequested)
        {
        }
        catch (Exception exception)
        {
            Fail(exception);
        }
        finally
        {
            plan.Dispose();
            ReaderExited();
        }
    }

    /// <summary>Blocks until the budget admits <paramref name="bytes"/>; the wait counts as producer-blocked time.</summary>
    public void Reserve(long bytes, CancellationToken cancellationToken)
    {
        var pending = Budget.ReserveAsync(bytes, cancellationToken);
        if (pending.IsCompletedSuccessfully)
        {
            return;
        }

        using (Meter.ProducerBlocked.Measure())
        {
            pending.AsTask().GetAwaiter().GetResult();
        }
    }

    /// <summary>
    /// Reads a task whose bytes are reserved and publishes it. On cancellation or failure the
    /// reservation is returned (a failure also fails the run) and the result is false.
    /// </summary>
    public bool ReadAndPublish(ReadTask task)
    {
        CompletedRead read;
        try
        {
            read = _reader.Read(task, _token);
        }
        catch (OperationCanceledException) when (_token.IsCancellationRequested)
        {
            Budget.CancelRead(task.Bytes);
            return false;
        }
        catch (Exception exception)
        {
            Budget.CancelRead(task.Bytes);
            Fail(exception);
            return false;
        }

        Ready.Publish(read);
        return true;
    }

    /// <summary>No reader will touch the source again: dispose it (once) and end the ready reads.</summary>
    public void ReleaseSource()
    {
        if (Interlocked.Exchange(ref _sourceReleased, 1) != 0)
        {
            return;
        }

        // The source is disposed even if the hook throws (else the snapshot leaks), and a failure of
        // either is never dropped: it fails the run if the run is still going, else DisposeAsync throws it.
        Exception? releaseFailure = null;
        try
        {
            _beforeSourceRelease?.Invoke();
        }
        catch (Exception exception)
        {
            releaseFailure = exception;
        }
        finally
        {
            try
            {
                _source.Dispose();
            }
            catch (Exception exception)
            {
                releaseFailure = releaseFailure is null ? exception : new AggregateException(releaseFailure, exception);
            }
        }

        if (releaseFailure is not null)
        {
            lock (_stateLock)
            {
                _releaseFailure = releaseFailure;
            }

            // A reader can get here before the token's callback marked the run Cancelled; a cancelled
            // run stays Cancelled (and DisposeAsync reports the release failure).
            if (_token.IsCancellationRequested)
            {
                EndIfRunning();
            }

            Fail(releaseFailure);
        }

        // Published before the ready reads complete, so a consumer that sees the end sees the final state too.
        EndIfRunning();
        Publish();
        Ready.Complete();
        _readersStopped.TrySetResult();
    }

    /// <summary>The consumer's take: what is ready, else wait (see ReadyReads.TakeAsync); at the end, null or why not.</summary>
    public async ValueTask<PrefetchBatch?> TakeAsync(
        object owner, int maxDocuments, long maxBytes, Action? onNothingReady, CancellationToken cancellationToken)
    {
        ThrowIfUnusable(owner, atEnd: false);
        if (await Ready.TakeAsync(maxDocuments, maxBytes, onNothingReady, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            return batch;
        }

        _ticks.Stop();
        Publish();
        ThrowIfUnusable(owner, atEnd: true);
        return null;
    }

    public PrefetchPressure Publish()
    {
        if (_view is not { } view)
        {
            return Meter.Latest;
        }

        // Serialised so that a tick's snapshot cannot overwrite a newer one published at the end.
        lock (_publishLock)
        {
            PrefetchState state;
            string? failure;
            lock (_stateLock)
            {
                state = _state;
                failure = _failure?.Message;
            }

            return Meter.Publish(view(), new RunView(state, Ready.Queued, failure));
        }
    }

    /// <summary>
    /// Idempotent: cancels, waits for <paramref name="readersStopped"/>, releases the source, stops
    /// the ticks, returns untaken bytes, closes the budget and publishes the final snapshot. Throws
    /// a failure to release the source that the run could not report as its own failure.
    /// </summary>
    public async ValueTask DisposeAsync(Func<Task> readersStopped)
    {
        if (Interlocked.Exchange(ref _disposeStarted, 1) != 0)
        {
            await _disposed.Task.ConfigureAwait(false);
            return;
        }

        try
        {
            _stop.Cancel();
            await readersStopped().ConfigureAwait(false);
            ReleaseSource();
            await _ticks.StopAsync().ConfigureAwait(false);
            Ready.DrainAndRelease();
            Publish();
            Budget.Close();
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

    // A release failure that did not become the run's failure (the run had already been cancelled or
    // failed) has nowhere else to go.
    private Exception? UnreportedReleaseFailure()
    {
        lock (_stateLock)
        {
            return _releaseFailure is { } failure && !ReferenceEquals(failure, _failure) ? failure : null;
        }
    }

    // Readers may see the token and stop before the token's own callbacks ran, so whoever ends the
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

    private void ThrowIfUnusable(object owner, bool atEnd)
    {
        ObjectDisposedException.ThrowIf(IsDisposed, owner);
        lock (_stateLock)
        {
            if (_state == PrefetchState.Cancelled)
            {
                throw new OperationCanceledException("The prefetcher was cancelled before it finished reading.", _token);
            }

            // A failure is reported once what was read before it has been handed out.
            if (atEnd && _failureDispatch is { } failure)
            {
                failure.Throw();
            }
        }
    }

    private void Tick()
    {
        _onTick();
        Meter.Sizes.Decay(_sizeDecayFactor);
        Publish();
    }
}
