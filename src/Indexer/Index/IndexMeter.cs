using System.Diagnostics;

namespace Indexing.Indexer;

// An index's counters: updated with Interlocked by the indexing threads, read as an immutable
// IndexMetrics. Times are Stopwatch ticks; stall ticks are summed over threads and divided by
// the thread count of the run they came from when added.
internal sealed class IndexMeter
{
    private readonly long _startTimestamp = Stopwatch.GetTimestamp();
    private long _documents;
    private long _bytes;
    private long _deletes;
    private long _documentsRead;
    private long _commits;
    private long _stallTicks;
    private long _luceneTicks;
    private long _commitTicks;

    public void Indexed(long bytes)
    {
        Interlocked.Increment(ref _documents);
        Interlocked.Add(ref _bytes, bytes);
    }

    public void Deleted() => Interlocked.Increment(ref _deletes);

    public void Read(long documents) => Interlocked.Add(ref _documentsRead, documents);

    public void InEngine(long ticks) => Interlocked.Add(ref _luceneTicks, ticks);

    public void Stalled(long ticks) => Interlocked.Add(ref _stallTicks, ticks);

    public void Committed(long ticks)
    {
        Interlocked.Increment(ref _commits);
        Interlocked.Add(ref _commitTicks, ticks);
    }

    /// <summary>Totals since the index opened.</summary>
    public IndexMetrics Snapshot() => new(
        Volatile.Read(ref _documents),
        Volatile.Read(ref _bytes),
        Volatile.Read(ref _deletes),
        Volatile.Read(ref _documentsRead),
        Volatile.Read(ref _commits),
        Stopwatch.GetElapsedTime(_startTimestamp),
        Stopwatch.GetElapsedTime(0, Volatile.Read(ref _stallTicks)),
        Stopwatch.GetElapsedTime(0, Volatile.Read(ref _luceneTicks)),
        Stopwatch.GetElapsedTime(0, Volatile.Read(ref _commitTicks)));

    /// <summary>What happened between <paramref name="before"/> and now, over <paramref name="elapsed"/>.</summary>
    public IndexMetrics Since(IndexMetrics before, TimeSpan elapsed)
    {
        var now = Snapshot();
        return new IndexMetrics(
            now.Documents - before.Documents,
            now.Bytes - before.Bytes,
            now.Deletes - before.Deletes,
            now.DocumentsRead - before.DocumentsRead,
            now.Commits - before.Commits,
            elapsed,
            now.StallTime - before.StallTime,
            now.LuceneTime - before.LuceneTime,
            now.CommitTime - before.CommitTime);
    }
}
