namespace Indexing.Indexer;

// One generation of an index as queries see it: the open DocumentIndex plus a count of queries
// running on it, so that a swap can retire it, wait until its last query ended ("drain"), and
// only then close and delete it. No query ever runs on a closed generation.
internal sealed class ServingIndex
{
    private const int RetiredBit = 1 << 30;
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _state;
    private int _closed;

    public ServingIndex(DocumentIndex index, int generation)
    {
        Index = index;
        Generation = generation;
    }

    public DocumentIndex Index { get; }

    public int Generation { get; }

    public int RunningQueries => Volatile.Read(ref _state) & ~RetiredBit;

    // False once retired: the caller reads the manager's current generation again.
    public bool TryAcquire()
    {
        if ((Interlocked.Increment(ref _state) & RetiredBit) != 0)
        {
            Release();
            return false;
        }

        return true;
    }

    public void Release()
    {
        if (Interlocked.Decrement(ref _state) == RetiredBit)
        {
            _drained.TrySetResult();
        }
    }

    // True for the first caller only: the one that closes the generation once it is drained (the
    // swap, a deferred close when the last query ends, or shutdown).
    public bool TryClaimClose() => Interlocked.Exchange(ref _closed, 1) == 0;

    public bool IsRetired => (Volatile.Read(ref _state) & RetiredBit) != 0;

    // New queries go elsewhere from now on; the task completes when the last running one ended.
    // Idempotent: every call returns the same task.
    public Task RetireAsync()
    {
        if ((Interlocked.Or(ref _state, RetiredBit) & ~RetiredBit) == 0)
        {
            _drained.TrySetResult();
        }

        return _drained.Task;
    }
}
