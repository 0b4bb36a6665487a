namespace Indexing.Indexer;

// How long a bulk build waits between its commits. A crash redoes at most what was indexed since the
// last commit, so the wait sets what a resume loses; a fixed wait is too long for a short build (a
// large share of it lost) and needlessly short for a long one. So the wait is a share of the
// build's estimated duration, between a floor and the cap:
//
//   wait = min(cap, max(floor, share x estimated duration))
//   estimated duration = elapsed x total bytes / bytes done (the rate so far, over the whole total)
//   floor = max(MinimumInterval, CommitCostMultiple x the last commit's duration)
//
// - Before any byte is done there is no rate: the floor. Waiting the cap instead would lose up to the
//   cap of a build that turns out short; the floor costs at most one commit (none if the key has not
//   moved, the loop skips those), and the wait is recomputed once a rate is known.
// - The total is the source's: the prefetcher counts it within seconds of the start; before that its
//   planned bytes, a lower bound (and 0 for a source that does not plan). A total below the bytes done
//   counts as the bytes done, so an unknown total gives share x elapsed: a crash loses at most that
//   share of the time spent so far, and the wait grows with the build.
// - The cap wins over the floor (a cap below the floor, as tests set, is the wait).
// - The commit-cost term keeps commits from running back to back where one takes longer than the
//   floor (a slow disk, a loaded machine): at most half the time is spent committing. Commits run
//   beside the indexing threads, so the share they may take is generous: under load, commits every
//   second did not slow a build measurably, though they raised what it allocated (docs/decisions/0012-bulk-commit-cadence.md;
//   benchmarks/results/README.md, "Resumed rebuild").
//
// A pure function of its inputs (unit-tested on its own); the commit loop (BulkCommitLoop.cs)
// feeds it the bytes the build indexed and the time it has run (its own meter: any source will do),
// the source's planned bytes and the last commit's duration.
internal readonly record struct BulkCommitCadence(double Share, TimeSpan Cap)
{
    /// <summary>The shortest wait when commits are cheap: a commit's cost on a quiet 2-core VM is a small part of it.</summary>
    public static readonly TimeSpan MinimumInterval = TimeSpan.FromSeconds(1);

    /// <summary>The wait is at least this many times the last commit's duration.</summary>
    public const double CommitCostMultiple = 2;

    /// <summary>The wait before the next commit (measured from when the last one began).</summary>
    /// <param name="totalBytes">The bulk phase's total bytes as known now (0 when unknown).</param>
    /// <param name="doneBytes">Bytes the build indexed so far.</param>
    /// <param name="elapsed">Time the bulk phase has run, over which <paramref name="doneBytes"/> were done.</param>
    /// <param name="lastCommit">How long the last commit took (zero before the first).</param>
    public TimeSpan Interval(long totalBytes, long doneBytes, TimeSpan elapsed, TimeSpan lastCommit)
    {
        var floor = Max(MinimumInterval, lastCommit * CommitCostMultiple);
        if (doneBytes <= 0 || elapsed <= TimeSpan.Zero)
        {
            return Min(Cap, floor);
        }

        // elapsed x (total / done) in double: a total of many TiB over a few bytes done must not overflow.
        var estimatedSeconds = elapsed.TotalSeconds * ((double)Math.Max(totalBytes, doneBytes) / doneBytes);
        var shareSeconds = Share * estimatedSeconds;
        var wait = shareSeconds >= Cap.TotalSeconds ? Cap : Max(floor, TimeSpan.FromSeconds(shareSeconds));
        return Min(Cap, wait);
    }

    private static TimeSpan Max(TimeSpan a, TimeSpan b) => a > b ? a : b;

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;
}
