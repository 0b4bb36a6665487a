namespace Indexing.Prefetcher;

// How ReadPlanner cuts the key space, validated when built. Immutable.
internal sealed class PlanOptions
{
    public const long KiB = 1024;
    public const long MiB = 1024 * KiB;
    public const int DefaultMaxDocumentsPerTask = 4096;

    public PlanOptions(
        long defaultTaskBytes,
        long minTaskBytes,
        long maxTaskBytes,
        int maxDocumentsPerTask,
        long largeDocumentThresholdBytes,
        long? firstTaskBytes = null)
    {
        // Internal, and built from validated options: the BCL's messages (name, value, bound) suffice.
        ArgumentOutOfRangeException.ThrowIfLessThan(minTaskBytes, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxTaskBytes, minTaskBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(defaultTaskBytes, minTaskBytes);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(defaultTaskBytes, maxTaskBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxDocumentsPerTask, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(largeDocumentThresholdBytes, 1);
        if (firstTaskBytes is { } first)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(first, minTaskBytes, nameof(firstTaskBytes));
        }
        FirstTaskBytes = firstTaskBytes;
        DefaultTaskBytes = defaultTaskBytes;
        MinTaskBytes = minTaskBytes;
        MaxTaskBytes = maxTaskBytes;
        MaxDocumentsPerTask = maxDocumentsPerTask;
        LargeDocumentThresholdBytes = largeDocumentThresholdBytes;
    }

    // Target before any throughput is measured (and when no target delegate is given).
    public long DefaultTaskBytes { get; }

    // The run's first task of small documents; the next ones double up to the target (TaskRamp).
    //   Null: every task is cut against the target.
    public long? FirstTaskBytes { get; }

    // Floor for a measured target: below it, per-task overhead outweighs the I/O.
    public long MinTaskBytes { get; }

    // Ceiling for a measured target, so several tasks always fit the budget at once.
    public long MaxTaskBytes { get; }

    // Bounds one MultiGet's key count (and the ids a task holds), however small the documents.
    public int MaxDocumentsPerTask { get; }

    // A document bigger than this is a task of its own, read apart from the small ones.
    public long LargeDocumentThresholdBytes { get; }

    // From the byte budget: four or more tasks fit it at once, and 64 MiB is already ~50-100 ms of
    //   I/O at 0.6-1.3 GB/s; until a throughput is measured, about sixteen tasks in flight, each
    //   modest enough for a slow disk; a document above a sixteenth of it (1-64 MiB, and never
    //   above the largest task: a document that cannot share a task is read alone) is a task alone.
    //   The first tasks ramp up from firstTaskBytes (clamped to those bounds) when it is given.
    public static PlanOptions ForBudget(long budgetBytes, long? firstTaskBytes = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(budgetBytes, 1);

        var max = Math.Max(1, Math.Min(budgetBytes / 4, 64 * MiB));
        var min = Math.Min(64 * KiB, max);
        var fallback = Math.Clamp(Math.Min(budgetBytes / 16, 4 * MiB), min, max);
        var large = Math.Min(Math.Clamp(budgetBytes / 16, 1 * MiB, 64 * MiB), max);
        return new PlanOptions(fallback, min, max, DefaultMaxDocumentsPerTask, large, firstTaskBytes is { } first ? Math.Clamp(first, min, max) : null);
    }

    // The baselines' way: N documents per task, whatever their bytes.
    public static PlanOptions FixedCount(int documentsPerTask)
    {
        const long Unbounded = long.MaxValue / 4;
        return new PlanOptions(Unbounded, 1, Unbounded, documentsPerTask, Unbounded);
    }

    public long ClampTarget(long targetBytes) => Math.Clamp(targetBytes, MinTaskBytes, MaxTaskBytes);
}
