namespace Indexing.Prefetcher;

// The planner thread and the reader threads. The planner issues tasks strictly in key order:
// budget first (reserved before the read, so the budget bounds what reads can bring in), then the
// MB/s cap, then a concurrency slot (holding a slot while waiting for tokens would make "reads
// running" lie). Ownership of the reservation and the slot then passes to the reader, which
// returns the slot when its read ends and hands the bytes on (buffered) or back (cancelled/failed).
public sealed partial class AdaptivePrefetcher
{
    private void PlanAndIssue() => _run.IssuePlan(_plan, Issue, planEnded: _workers.Complete);

    private bool Issue(ReadTask task)
    {
        var token = _run.Token;
        _run.Reserve(task.Bytes, token);
        try
        {
            _rate.Acquire(task.Bytes, _run.Meter.RateLimitWait, token);
            _gate.Acquire(token);
        }
        catch
        {
            _run.Budget.CancelRead(task.Bytes);
            throw;
        }

        if (!_workers.Dispatch(task))
        {
            // Only a stopping pool refuses, and only after the token fired.
            _gate.Release();
            _run.Budget.CancelRead(task.Bytes);
            token.ThrowIfCancellationRequested();
        }

        return true;
    }

    // On a reader thread.
    private void ReadOne(ReadTask task)
    {
        try
        {
            _run.ReadAndPublish(task);
        }
        finally
        {
            _gate.Release();
        }
    }

    // After the last reader stopped: tasks dispatched but never started still hold their bytes and slots.
    private void ReturnUnstarted()
    {
        foreach (var task in _workers.DrainUnstarted())
        {
            _gate.Release();
            _run.Budget.CancelRead(task.Bytes);
        }
    }
}
