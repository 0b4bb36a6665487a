using Lucene.Net.Index;

namespace Indexing.Indexer;

// Lucene's default merge scheduler with its merge threads at the indexing nice value
// (IndexOptions.IndexingThreadNice): merges are indexing work, and request threads should win the
// CPU over them as over the indexing threads. DoMerge runs on the merge thread (a dedicated thread
// that ends with its merges), so it lowers that thread before each merge; a thread created by a
// lowered indexing thread is at that nice value already, and lowering is then a no-op.
internal sealed class LowPriorityMergeScheduler(int nice, Action? afterLowering = null) : ConcurrentMergeScheduler
{
    // Test hook: runs on the merge thread after it was lowered, before the merge; null outside tests.
    private readonly Action? _afterLowering = afterLowering;

    public int Nice { get; } = nice;

    protected override void DoMerge(MergePolicy.OneMerge merge)
    {
        // Under the scheduler's monitor: Lucene sets each merge thread's Thread.Priority while holding
        // it, from the thread that started the merge, just as the merge thread starts (Merge, then
        // UpdateMergeThreads). Interleaved with that, the lowering was lost: the merge thread read nice
        // 0 right after lowering itself to 6, in about one run of the indexer tests in five.
        lock (this)
        {
            ThreadNice.TryLowerCurrentThread(Nice);
        }

        _afterLowering?.Invoke();
        base.DoMerge(merge);
    }
}
