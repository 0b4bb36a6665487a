namespace Indexing.Indexer;

/// <summary>
/// Starts the indexer's CPU-heavy workers (a build's indexing threads, the engine-alone bound's
/// adders) on dedicated threads at <see cref="IndexOptions.IndexingThreadNice"/>. Dedicated, not
/// thread-pool threads: a thread's nice value cannot be raised back without privileges, and an
/// async worker would move between pool threads at every await, lowering threads that later serve
/// requests.
/// <para>
/// The returned task is completed by a separate joining thread of normal priority once the worker
/// has ended (its exception, if any, is the task's), so the continuations of whoever awaits it are
/// never queued from the lowered thread.
/// </para>
/// </summary>
internal static class IndexingThread
{
    /// <summary>Runs <paramref name="work"/> on a new background thread named <paramref name="name"/> (at most 15 characters show in /proc) at <paramref name="nice"/>.</summary>
    public static Task Start(string name, int nice, Action work)
    {
        ArgumentNullException.ThrowIfNull(work);
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                ThreadNice.TryLowerCurrentThread(nice);
                work();
            }
            catch (Exception exception)
            {
                failure = exception;
            }
        })
        {
            IsBackground = true,
            Name = name,
        };
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var joiner = new Thread(() =>
        {
            thread.Join();
            _ = failure switch
            {
                null => done.TrySetResult(),
                OperationCanceledException cancelled => done.TrySetCanceled(cancelled.CancellationToken),
                Exception other => done.TrySetException(other),
            };
        })
        {
            IsBackground = true,
            Name = "indexing join",
        };
        thread.Start();
        joiner.Start();
        return done.Task;
    }
}
