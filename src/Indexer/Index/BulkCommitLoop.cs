using System.Diagnostics;

using Indexing.Prefetcher;

namespace Indexing.Indexer;

/// <summary>
/// The bulk commits of a <see cref="DocumentIndex"/>'s builds: during a build, a commit every
/// interval <see cref="BulkCommitCadence"/> sets, recording the indexed-through key as it stood when
/// the commit began (what a crashed build resumes after). Owns the interval in force, which the
/// index's status shows (it stays at the last build's once that build ends).
/// </summary>
/// <remarks>
/// Threading: <see cref="RunAsync"/> runs on its own task, one build at a time, beside the build's
/// workers (the engine allows a commit concurrent with adds); the commit it is given takes the
/// index's write gate. <see cref="Interval"/> is read from any thread.
/// </remarks>
internal sealed class BulkCommitLoop(IndexOptions options)
{
    private long _intervalTicks; // the loop's current wait (0: no build ran yet)

    /// <summary>The interval between bulk commits in force in the current (or last) build; null before the first build.</summary>
    public TimeSpan? Interval => Volatile.Read(ref _intervalTicks) is var ticks and > 0 ? TimeSpan.FromTicks(ticks) : null;

    /// <summary>
    /// Runs until <paramref name="cancellationToken"/> stops it (the build ended or stopped). At the
    /// cadence BulkCommitCadence sets (recomputed at least every MinimumInterval from the bytes this
    /// build indexed since it started, the source's planned total and the last commit's duration,
    /// the shortest since the last commit or skip in force; the waits run from one commit's start
    /// to the next), <paramref name="commit"/> records the key as it stood when the commit began,
    /// with the documents the batches up to it added: those documents were added before, so the
    /// commit holds them (a commit flushes every document added before it starts; those added
    /// meanwhile may or may not be in it, and are above the key). Skipped while the key has not
    /// moved from the last commit's (<paramref name="committed"/>: the key the build started from):
    /// such a commit would not shorten a resume. <paramref name="bulkCommitted"/> is told each
    /// commit's key.
    /// </summary>
    public async Task RunAsync(
        IBatchSource source,
        IndexedThroughKey key,
        string? committed,
        Func<long> bytesIndexed,
        long buildStarted,
        Action<string?, long> commit,
        Action<string?>? bulkCommitted,
        CancellationToken cancellationToken)
    {
        var cadence = new BulkCommitCadence(options.BulkCommitShare, options.BulkCommitInterval);
        var lastCommit = TimeSpan.Zero;
        var lastStarted = Stopwatch.GetTimestamp();
        // When the next commit is due, from lastStarted (the last commit or skip): the shortest
        // interval computed since then.
        var due = TimeSpan.MaxValue;
        try
        {
            while (true)
            {
                var interval = cadence.Interval(source.Pressure.BytesKnown, bytesIndexed(), Stopwatch.GetElapsedTime(buildStarted), lastCommit);
                due = interval < due ? interval : due;
                Volatile.Write(ref _intervalTicks, due.Ticks);
                var wait = due - Stopwatch.GetElapsedTime(lastStarted);
                // (Under a millisecond is due: Task.Delay would return at once.)
                if (wait >= TimeSpan.FromMilliseconds(1))
                {
                    // At most MinimumInterval at a time, then the interval again, which may bring the
                    // commit forward but never puts it off. An estimate from the build's first few
                    // documents can be the cap: slept whole, it can leave a short build without a bulk
                    // commit, and the rate a second later is a better one. And while the build waits
                    // for its source, its estimated duration grows with the wait: recomputed intervals
                    // would outrun it.
                    await Task.Delay(wait < BulkCommitCadence.MinimumInterval ? wait : BulkCommitCadence.MinimumInterval, cancellationToken).ConfigureAwait(false);
                    continue;
                }

                lastStarted = Stopwatch.GetTimestamp();
                due = TimeSpan.MaxValue;
                var (through, added) = key.Prefix();
                if (through == committed)
                {
                    continue;
                }

                commit(through, added);
                lastCommit = Stopwatch.GetElapsedTime(lastStarted);
                committed = through;
                bulkCommitted?.Invoke(through);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // The build ended (its last commit follows) or stopped.
        }
    }
}
