using System.Collections.Concurrent;
using System.Diagnostics;

using Indexing.Storage;

namespace Indexing.Prefetcher;

// The planner cuts the metadata scan into tasks and admits each in key order (but for long reads
// that small ones pass while the long reads' lanes are full: LongReadLanes), owning its bytes and
// slot until a reader hands them on; readers are threads of their own, as a RocksDB MultiGet or
// iterator blocks its thread for the whole read. A failure of the scan or of a read is wrapped
// once, where it happens, as a PrefetchReadException naming the key range.
internal sealed partial class PrefetchPipeline
{
    private readonly Thread _planner;
    private readonly Thread _census;
    private readonly BlockingCollection<ReadTask> _issued = new();
    private readonly List<Thread> _readers = [];
    private readonly LongReadLanes _longReads = new();

    // The planner thread's: the scan cut into tasks, and the last task cut (where a scan failure happened).
    private IEnumerator<ReadTask>? _plan;
    private string? _lastPlannedId;

    // The planner, the census and the readers still running; the last one out releases the source.
    private int _threadsRunning;
    private int _sourceReleased;

    /// <summary>The planner and every reader thread started so far.</summary>
    internal IReadOnlyList<Thread> Threads
    {
        get
        {
            lock (_readers)
            {
                return [_planner, _census, .. _readers];
            }
        }
    }

    /// <summary>Long reads started and not yet ended (see <see cref="LongReadLanes"/>): 0 once the readers stopped.</summary>
    internal int LongReadsRunning => _longReads.Running;

    /// <summary>Test hook: runs when the last thread stopped, before unstarted tasks return and the source is disposed.</summary>
    internal Action? BeforeSourceRelease { get; set; }

    private void StartThreads()
    {
        _threadsRunning = 2;
        _token.Register(EndIfRunning);
        Publish();
        _ticks = Task.Run(TickAsync);
        _planner.Start();
        _census.Start();
    }

    // The run's documents and bytes, counted in a second pass over the snapshot's metadata beside the
    // planner's lazy one (whose totals grow until the last task), so progress and the ETA have the
    // whole within seconds. A failing census leaves the totals unknown and the run going: the planner
    // reads the same rows, so a store that fails it fails the planner too, which names the place.
    private void Count()
    {
        try
        {
            var (documents, bytes) = _source.ScanMetadata(_token).Aggregate((0L, 0L), (total, row) => (total.Item1 + 1, total.Item2 + row.SizeBytes));
            _meter.Counted(documents, bytes);
        }
        catch (Exception exception) when (exception is not OutOfMemoryException)
        {
        }
        finally
        {
            ThreadExited();
        }
    }

    private void PlanAndIssue()
    {
        try
        {
            Func<ReadTask?> planned = NextPlanned;
            while (_longReads.Next(planned, Admission.ConcurrencyLimit, Admission.Limits.BudgetBytes) is { } task)
            {
                Admission.Admit(task.Bytes, _token);
                _longReads.Started(task);
                _issued.Add(task);
                StartReaderIfNeeded();
            }

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
            // Ends the scan, releasing its iterator, before the source is disposed.
            _plan?.Dispose();
            ThreadExited();
        }
    }

    // The next task cut lazily from the metadata scan, counted as planned; null at the scan's end.
    private ReadTask? NextPlanned()
    {
        try
        {
            _plan ??= ReadPlanner.Plan(_source.ScanMetadata(_token), _policy.Plan, () => Volatile.Read(ref _targetTaskBytes), () => Admission.ConcurrencyLimit).GetEnumerator();
            if (!_plan.MoveNext())
            {
                // Running once the scan ends, though long reads may still wait for their lanes.
                _meter.PlanCompleted();
                SetRunning();
                return null;
            }
        }
        catch (Exception exception) when (PrefetchReadException.ShouldWrap(exception, _token))
        {
            throw PrefetchReadException.ForScan(_lastPlannedId, exception);
        }

        var task = _plan.Current;
        _lastPlannedId = task.LastId;
        _meter.Planned(task);
        return task;
    }

    // One reader per read admitted at once (so every admitted task has a reader free for it), up to
    // the policy's maximum: threads start only as L grows, and park in the queue while it is empty.
    private void StartReaderIfNeeded()
    {
        var running = Admission.Snapshot().Running;
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

    // Until the plan is read or the token fires. An exception escaping here is a bug around a read: it
    // fails the run, where the consumer sees it, instead of ending the process.
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
            read = Read(task);
        }
        catch (Exception exception)
        {
            ReadEnded(task, actualBytes: null);
            if (exception is not OperationCanceledException || !_token.IsCancellationRequested)
            {
                Fail(exception);
            }

            return;
        }

        ReadEnded(task, read.Bytes);
        _ready.Publish(read);
    }

    // Frees the task's slot and bytes (buffering what it read), and its lane if it is long.
    private void ReadEnded(ReadTask task, long? actualBytes)
    {
        _longReads.Ended(task);
        Admission.ReadEnded(task.Bytes, actualBytes);
    }

    private CompletedRead Read(ReadTask task)
    {
        var documents = new List<PrefetchedDocument>(task.DocumentCount);
        var started = Stopwatch.GetTimestamp();
        _meter.ReadsInSource(+1);
        TimeSpan latency;
        long bytes;
        try
        {
            try
            {
                _source.Read(task, documents, _token);
            }
            finally
            {
                latency = Stopwatch.GetElapsedTime(started);
                _meter.ReadsInSource(-1);
            }

            bytes = CheckRead(task, documents);
        }
        catch (Exception exception) when (PrefetchReadException.ShouldWrap(exception, _token))
        {
            throw PrefetchReadException.ForTask(task, exception);
        }

        _meter.Sizes.RecordBatch(documents);
        _meter.ReadCompleted(bytes, documents.Count, latency, task.Ramp);
        return new CompletedRead(task, documents, bytes);
    }

    // Under a snapshot the store must return exactly what its metadata listed; anything else is a
    // bug or corruption, and passing it on would silently drop or duplicate documents.
    private static long CheckRead(ReadTask task, List<PrefetchedDocument> documents)
    {
        if (documents.Count != task.DocumentCount)
        {
            throw new InvalidOperationException(
                $"the source returned {documents.Count} documents for a task of {task.DocumentCount}; a snapshot read must return every listed document once.");
        }

        long bytes = 0;
        for (var i = 0; i < documents.Count; i++)
        {
            if (!string.Equals(documents[i].Id, task.Ids[i], StringComparison.Ordinal))
            {
                throw new InvalidOperationException(
                    $"the source returned {MessageText.Quote(documents[i].Id)} where {MessageText.Quote(task.Ids[i])} was expected; documents must come in the task's key order.");
            }

            if (documents[i].Etag != task.Etags[i])
            {
                throw new InvalidOperationException(
                    $"the source returned {MessageText.Quote(documents[i].Id)} with etag {documents[i].Etag} where the metadata scan listed {task.Etags[i]}; a document must carry its snapshot etag.");
            }

            bytes += documents[i].SizeBytes;
        }

        return bytes;
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
                ReadEnded(unstarted, actualBytes: null);
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

        // Reading has ended: the device's other prefetches get its whole L back.
        _deviceLease?.Dispose();

        // Published before the ready reads complete, so a consumer that sees the end sees the final state too.
        EndIfRunning();
        Publish();
        _ready.Complete();
        _readersStopped.TrySetResult();
    }
}
