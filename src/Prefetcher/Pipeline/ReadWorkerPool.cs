namespace Indexing.Prefetcher;

/// <summary>
/// Dedicated reader threads. Store reads block (a RocksDB MultiGet or iterator holds its thread
/// for the whole read), so they run on threads of their own rather than starving the thread pool.
/// Threads start on demand, up to <c>maxThreads</c> (the controller's maximum L), and park when
/// idle; the concurrency gate upstream decides how many reads run, so the pool never needs more.
/// <para>
/// <see cref="Complete"/>: no more tasks; threads finish the queue and exit. <see cref="Stop"/>:
/// threads exit after their current read (which the run's token interrupts); tasks still queued are
/// left for <see cref="DrainUnstarted"/>, so their reservations can be returned.
/// </para>
/// <para>
/// An exception escaping <c>read</c> (a bug in the bookkeeping around a read: the read itself
/// reports its failures to the run) is caught at the top of the thread and handed to
/// <c>onFailure</c>, which fails the run so the consumer sees it; left alone it would be an
/// unhandled exception on a thread, which ends the process.
/// </para>
/// Threading: Dispatch from the planner, Stop from anywhere; all state under one monitor.
/// </summary>
internal sealed class ReadWorkerPool(
    string name, int maxThreads, Action<ReadTask> read, Action threadStarting, Action threadExited, Action<Exception> onFailure)
{
    private readonly object _lock = new();
    private readonly Queue<ReadTask> _queue = new();
    private readonly List<Thread> _threads = [];
    private int _idle;
    private bool _completing;
    private bool _stopping;

    /// <summary>Every thread the pool started (for tests that check all of them exited).</summary>
    public IReadOnlyList<Thread> Threads
    {
        get
        {
            lock (_lock)
            {
                return [.. _threads];
            }
        }
    }

    /// <summary>Queues a read; false once the pool is stopping (the caller still owns the task).</summary>
    public bool Dispatch(ReadTask task)
    {
        lock (_lock)
        {
            if (_stopping || _completing)
            {
                return false;
            }

            _queue.Enqueue(task);
            if (_queue.Count > _idle && _threads.Count < maxThreads)
            {
                StartThreadLocked();
            }
            else
            {
                Monitor.Pulse(_lock);
            }

            return true;
        }
    }

    public void Complete()
    {
        lock (_lock)
        {
            _completing = true;
            Monitor.PulseAll(_lock);
        }
    }

    public void Stop()
    {
        lock (_lock)
        {
            _stopping = true;
            Monitor.PulseAll(_lock);
        }
    }

    /// <summary>Tasks dispatched but never started; call once every thread exited.</summary>
    public List<ReadTask> DrainUnstarted()
    {
        lock (_lock)
        {
            var unstarted = _queue.ToList();
            _queue.Clear();
            return unstarted;
        }
    }

    private void StartThreadLocked()
    {
        var thread = new Thread(Work) { IsBackground = true, Name = $"{name} {_threads.Count + 1}" };
        threadStarting();
        _threads.Add(thread);
        thread.Start();
    }

    private void Work()
    {
        try
        {
            while (true)
            {
                ReadTask task;
                lock (_lock)
                {
                    while (_queue.Count == 0 && !_stopping && !_completing)
                    {
                        _idle++;
                        Monitor.Wait(_lock);
                        _idle--;
                    }

                    if (_stopping || _queue.Count == 0)
                    {
                        return;
                    }

                    task = _queue.Dequeue();
                }

                read(task);
            }
        }
        catch (Exception exception)
        {
            onFailure(exception);
        }
        finally
        {
            threadExited();
        }
    }
}
