namespace Indexing.Prefetcher;

/// <summary>
/// The read tasks of one run, cut lazily from the source's metadata scan by <see cref="ReadPlanner"/>,
/// and counted as planned as they are cut (so planned totals grow with the scan). A failure of the
/// scan (or of the planner's order check) is wrapped once as <see cref="PrefetchReadException"/>
/// naming where the scan had got to (see <see cref="PrefetchReadException.ShouldWrap"/>).
/// Single-threaded: the planning thread owns it.
/// </summary>
internal sealed class PlannedTasks(IDocumentReadSource source, PlanOptions options, Func<long>? targetTaskBytes, PrefetchMeter meter)
    : IDisposable
{
    private IEnumerator<ReadTask>? _tasks;
    private string? _lastPlannedId;
    private bool _ended;

    public bool TryNext(CancellationToken cancellationToken, out ReadTask task)
    {
        task = null!;
        if (_ended)
        {
            return false;
        }

        try
        {
            _tasks ??= ReadPlanner.Plan(source.ScanMetadata(cancellationToken), options, targetTaskBytes).GetEnumerator();
            if (!_tasks.MoveNext())
            {
                _ended = true;
                meter.PlanCompleted();
                return false;
            }
        }
        catch (Exception exception) when (PrefetchReadException.ShouldWrap(exception, cancellationToken))
        {
            throw PrefetchReadException.ForScan(_lastPlannedId, exception);
        }

        task = _tasks.Current;
        _lastPlannedId = task.LastId;
        meter.Planned(task);
        return true;
    }

    /// <summary>Ends the scan (releasing its iterator; before the source is disposed). Idempotent.</summary>
    public void Dispose()
    {
        _ended = true;
        _tasks?.Dispose();
    }
}
