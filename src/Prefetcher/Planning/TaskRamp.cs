namespace Indexing.Prefetcher;

/// <summary>
/// The size of a run's first tasks of small documents: they start at a small size and double up
/// to the target, as TCP's window does. Before anything is measured the target is a task for a
/// fast stream (<see cref="ControllerOptions.InitialTaskBytes"/>, 4 MiB): on a slow one (8 MB/s)
/// that is half a second before the indexer gets its first document, while a 256 KiB task is 36
/// ms. The ramp ends when it reaches the target; a giant, read alone, does not take a step.
/// Not thread-safe: owned by the planner's one enumeration.
/// </summary>
internal sealed class TaskRamp(long? firstBytes)
{
    private long? _next = firstBytes is { } first ? Math.Max(1, first) : null;

    /// <summary>The target of the next task of small documents: <paramref name="target"/>, or less while ramping.</summary>
    public long Next(long target)
    {
        if (_next is not { } ramp)
        {
            return target;
        }
        _next = ramp >= target / 2 ? null : 2 * ramp;
        return Math.Min(ramp, target);
    }
}
