using System.Collections.Concurrent;

namespace Indexing.Prefetcher;

// The planner and the reader threads. The planner admits each task in key order (it then owns the
// task's bytes and slot) and queues it; a reader reads it, hands the bytes on as buffered (or back,
// if the read did not complete) and frees the slot. Store reads block (a RocksDB MultiGet or
// iterator holds its thread for the whole read), so readers are threads of their own, not the pool's.
public sealed partial class PrefetchPipeline
{
    private readonly TaskReader _reader;
    private readonly PlannedTasks _plan;
    private readonly Thread _planner;
    private readonly BlockingCollection<ReadTask> _issued = new();
    private readonly List<Thread> _readers = [];

    // The planner and the readers still running; the last one out releases the source.
    private int _threadsRunning;
    private int _sourceReleased;

    /// <summary>The planner and every reader thread started so far.</summary>
    internal IReadOnlyList<Thread> Threads
    {
        get
        {
            lock (_readers)
            {
                return [_planner, .. _readers];
            }
        }
    }

    /// <summary>Test hook: runs when the last thread stopped, before unstarted tasks return and the source is disposed.</summary>
    internal Action? BeforeSourceRelease { get; set; }

    private void StartThreads()
    {
        _threadsRunning = 1;
        _token.Register(EndIfRunning);
        Publish();
        _ticks = Task.Run(TickAsync);
        _planner.Start();
    }

    private void PlanAndIssue()
    {
        try
        {
            while (_plan.TryNext(_token, out var task))
            {
                _admission.Admit(task.Bytes, _token);
                _issued.Add(task);
                StartReaderIfNeeded();
            }

            SetRunning();
            _issued.CompleteAdding();
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
            _plan.Dispose();
            ThreadExited();
        }
    }

    // One reader per read admitted at once (so every admitted task has a reader free for it), up to
    // the policy's maximum: threads start only as L grows, and park in the queue while it is empty.
    private void StartReaderIfNeeded()
    {
        var running = _admission.Snapshot().Running;
        lock (_readers)
        {
            if (_readers.Count >= Math.Min(running, _policy.MaxReaders))
            {
                return;
            }

            var thread = new Thread(ReadIssued) { IsBackground = true, Name = $"Prefetch reader {_readers.Count + 1}" };
            Interlocked.Increment(ref _threadsRunning);
            _readers.Add(thread);
            thread.Start();
        }
    }

    // Until the plan is done and read, or the token fires: then after its current read, leaving queued
    // tasks to ReleaseSource. An exception escaping here is a bug around a read (reads report their own
    // failures): it fails the run, where the consumer sees it, instead of ending the process.
    private void ReadIssued()
    {
        try
        {
            foreach (var task in _issued.GetConsumingEnumerable(_token))
            {
                ReadOne(task);
            }
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
            ThreadExited();
        }
    }

    private void ReadOne(ReadTask task)
    {
        CompletedRead read;
        try
        {
            read = _reader.Read(task, _token);
        }
        catch (Exception exception)
        {
            _admission.ReadEnded(task.Bytes, actualBytes: null);
            if (exception is not OperationCanceledException || !_token.IsCancellationRequested)
            {
                Fail(exception);
            }

            return;
        }

        _admission.ReadEnded(task.Bytes, read.Bytes);
        _ready.Publish(read);
    }

    private void ThreadExited()
    {
        if (Interlocked.Decrement(ref _threadsRunning) == 0)
        {
            ReleaseSource();
        }
    }

    // No thread will touch the source again: return unstarted tasks, dispose the source (once), end the ready reads.
    private void ReleaseSource()
    {
        if (Interlocked.Exchange(ref _sourceReleased, 1) != 0)
        {
            return;
        }

        // The source is disposed even if returning the tasks throws (else the snapshot leaks), and a failure
        // of either is never dropped: it fails the run if the run is still going, else DisposeAsync throws it.
        Exception? releaseFailure = null;
        try
        {
            BeforeSourceRelease?.Invoke();
            while (_issued.TryTake(out var unstarted))
            {
                _admission.ReadEnded(unstarted.Bytes, actualBytes: null);
            }
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

            // A thread can get here before the token's callback marked the run Cancelled; a cancelled
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
        _ready.Complete();
        _readersStopped.TrySetResult();
    }
}
