namespace Indexing.Prefetcher;

/// <summary>
/// The size of a run's first tasks of small documents: they start at a small size and double up
/// to the target, as TCP's window does. Before anything is measured the target is a task for a
/// fast stream (<see cref="ControllerOptions.InitialTaskBytes"/>, 4 MiB): on a slow one (8 MB/s)
/// that is half a second before the indexer gets its first document, while a 256 KiB task is 36
/// ms. Each size goes to as many tasks as there are readers, so that every reader starts on a
/// small task: a ramp of one task per size gave the first readers its few small tasks and every
/// other reader started on a 4 MiB one, half a second on a slow stream (docs/decisions/0003). The
/// ramp ends when it reaches the target; a giant, read alone, does not take
/// a step. Not thread-safe: owned by the planner's one enumeration.
/// </summary>
internal sealed class TaskRamp(long? firstBytes)
{
    private long? _next = firstBytes is { } first ? Math.Max(1, first) : null;
    private int _cutAtThisSize;

    /// <summary>Whether tasks are still cut below the target: once it ends, <see cref="Next"/> returns the target.</summary>
    public bool Active => _next is not null;

    /// <summary>
    /// The target of the next task of small documents: <paramref name="target"/>, or less while
    /// ramping. The ramp doubles after <paramref name="readers"/> tasks (L when the task is cut) at a size.
    /// </summary>
    public long Next(long target, int readers = 1)
    {
        if (_next is not { } ramp)
        {
            return target;
        }
        if (ramp >= target)
        {
            _next = null;
            return target;
        }
        if (++_cutAtThisSize >= readers)
        {
            _cutAtThisSize = 0;
            _next = ramp >= target / 2 ? null : 2 * ramp;
        }
        return ramp;
    }
}
