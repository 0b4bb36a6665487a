namespace Indexing.Prefetcher;

/// <summary>
/// Which planned task the planner issues next: the next in key order, except that long reads take
/// at most half of the L slots (rounded up) while small tasks are there to take the others. A long
/// read that finds its lanes full waits, and the small tasks cut after it pass it; waiting long
/// reads are the next issued, oldest first, once a lane frees (a small read already waiting in
/// admission for a slot may take that slot first).
/// <para>
/// Why: on a slow stream a giant holds its reader for seconds (2-20 MiB at 8 MB/s is 0.25-2.5 s),
/// and in key order the readers soon all sit on giants. At the start of a rebuild, with L=2, the
/// indexer then had nothing at all until the first giant arrived, although small documents lay
/// between the giants. A single lane for small reads is not enough: one stream delivers 2 KiB
/// documents more slowly than the indexer takes them (docs/decisions/0004;
/// benchmarks/results/README.md, "Rebuild vs its bound and FixedBatch").
/// </para>
/// <para>
/// About a budget's worth of long reads wait at most (the one that passes the budget is the last
/// queued); beyond that the oldest goes whatever the lanes, so where every task is long (a stretch
/// of keys holding only large documents) every slot still reads, in key order. The baselines' tasks
/// are never long (their target is unbounded). Threading: <see cref="Next"/> on the planner thread
/// only; <see cref="Started"/> and <see cref="Ended"/> from any thread.
/// </para>
/// </summary>
internal sealed class LongReadLanes
{
    private readonly Queue<ReadTask> _waiting = new();
    private long _waitingBytes;
    private bool _planEnded;
    private int _running;

    /// <summary>Long reads admitted and not yet ended.</summary>
    public int Running => Volatile.Read(ref _running);

    /// <summary>
    /// Whether <paramref name="task"/> holds its reader much longer than a task cut to the target: a
    /// large document, or a document alone at more than twice its task's target (the planner puts a
    /// document that does not fit the target in a task of its own).
    /// </summary>
    public static bool IsLong(ReadTask task) => task.IsLargeDocument || task.Bytes > 2 * task.TargetBytes;

    /// <summary>
    /// The task to admit next, or null when the plan and the waiting long reads are done.
    /// </summary>
    /// <param name="planned">The next task cut from the scan, null at its end (called only when needed).</param>
    /// <param name="concurrency">L now.</param>
    /// <param name="maxWaitingBytes">How many bytes of long reads may wait to be passed (the budget).</param>
    public ReadTask? Next(Func<ReadTask?> planned, int concurrency, long maxWaitingBytes)
    {
        ArgumentNullException.ThrowIfNull(planned);
        while (true)
        {
            if (_waiting.Count > 0 && (_planEnded || LaneFree(concurrency) || _waitingBytes >= maxWaitingBytes))
            {
                var oldest = _waiting.Dequeue();
                _waitingBytes -= oldest.Bytes;
                return oldest;
            }

            if (_planEnded)
            {
                return null;
            }

            if (planned() is not { } task)
            {
                _planEnded = true;
                continue;
            }

            if (IsLong(task) && (_waiting.Count > 0 || !LaneFree(concurrency)))
            {
                _waiting.Enqueue(task);
                _waitingBytes += task.Bytes;
                continue;
            }

            return task;
        }
    }

    /// <summary>An admitted task was handed to the readers.</summary>
    public void Started(ReadTask task)
    {
        if (IsLong(task))
        {
            Interlocked.Increment(ref _running);
        }
    }

    /// <summary>A started task's read ended, or it was returned unread.</summary>
    public void Ended(ReadTask task)
    {
        if (IsLong(task) && Interlocked.Decrement(ref _running) < 0)
        {
            throw new InvalidOperationException(
                $"The long read of task {task.Sequence} ({MessageText.Quote(task.FirstId)}) ended more often than it started; every started task ends once.");
        }
    }

    private bool LaneFree(int concurrency) => Running < Math.Max(1, (concurrency + 1) / 2);
}
