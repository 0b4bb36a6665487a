namespace Indexing.Prefetcher;

/// <summary>
/// The one reader thread both baselines use: it reads the run's tasks (fixed-count batches) one at
/// a time, each only once it is permitted to. The baselines differ only in who permits: the
/// fixed-batch prefetcher when the consumer begins the previous batch (one batch ahead), the
/// sequential one when a take finds nothing ready (no overlap). A dedicated thread, because store
/// reads block; the consumer awaits the published batch instead of blocking a pool thread.
/// <para>Threading: <see cref="Permit"/> from any thread; everything else on the reader thread.</para>
/// </summary>
internal sealed class FixedCountReader
{
    private readonly PrefetchRun _run;
    private readonly PlannedTasks _plan;

    // Never allocates a wait handle (AvailableWaitHandle is not used), so it needs no disposal, and a
    // permit racing with shutdown stays harmless.
    private readonly SemaphoreSlim _permits;
    private int _readingNow;

    public FixedCountReader(PrefetchRun run, IDocumentReadSource source, int batchDocuments, int initialPermits, string threadName)
    {
        _run = run;
        _plan = new PlannedTasks(source, PlannedTasks.FixedCount(batchDocuments), targetTaskBytes: null, run.Meter);
        _permits = new SemaphoreSlim(initialPermits);
        Thread = new Thread(() => run.IssuePlan(_plan, ReadWhenPermitted)) { IsBackground = true, Name = threadName };
    }

    public Thread Thread { get; }

    /// <summary>1 while a batch is being read, else 0.</summary>
    public int ReadingNow => Volatile.Read(ref _readingNow);

    public void Start()
    {
        _run.ReaderStarted();
        Thread.Start();
    }

    /// <summary>Allows one more batch to be read.</summary>
    public void Permit() => _permits.Release();

    private bool ReadWhenPermitted(ReadTask task)
    {
        var token = _run.Token;
        _permits.Wait(token);
        _run.Reserve(task.Bytes, token);
        Volatile.Write(ref _readingNow, 1);
        try
        {
            return _run.ReadAndPublish(task);
        }
        finally
        {
            Volatile.Write(ref _readingNow, 0);
        }
    }
}
