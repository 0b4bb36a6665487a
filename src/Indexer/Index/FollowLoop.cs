namespace Indexing.Indexer;

/// <summary>
/// The background loop of a <see cref="DocumentIndex"/> that follows the change feed: runs a step,
/// and when nothing was applied waits the poll interval before the next; after a failed step it
/// backs off, doubling up to <see cref="MaxBackoff"/>, and ends once the index is in Error. Owns the
/// loop's task and its stop; what a step does (under the index's write gate, respecting a pause) is
/// the index's.
/// </summary>
/// <remarks>
/// Threading: <see cref="Start"/> and <see cref="Stop"/> are called by the index's state changes
/// (start, stop, dispose), never concurrently with each other for one start; the loop runs on the
/// thread pool.
/// </remarks>
internal sealed class FollowLoop
{
    /// <summary>The longest wait after failed steps.</summary>
    public static readonly TimeSpan MaxBackoff = TimeSpan.FromSeconds(5);

    private CancellationTokenSource? _stop;
    private Task? _loop;

    /// <summary>
    /// Starts the loop: <paramref name="step"/> returns the change entries it consumed (throwing
    /// <see cref="IndexWriteException"/> on a failure it recorded), <paramref name="succeeded"/>
    /// follows each step that did not throw, and <paramref name="inError"/> tells whether a failure
    /// put the index in Error, which ends the loop.
    /// </summary>
    public void Start(Func<int> step, Action succeeded, Func<bool> inError, TimeSpan pollInterval)
    {
        _stop = new CancellationTokenSource();
        var token = _stop.Token;
        _loop = Task.Run(() => RunAsync(step, succeeded, inError, pollInterval, token), CancellationToken.None);
    }

    /// <summary>Stops the loop and waits for it (at most 30 s); nothing happens when it is not running.</summary>
    public void Stop()
    {
        var stop = Interlocked.Exchange(ref _stop, null);
        if (stop is null)
        {
            return;
        }

        stop.Cancel();
        try
        {
            _loop?.Wait(TimeSpan.FromSeconds(30));
        }
        catch (AggregateException)
        {
            // The loop records its failures in the status; stopping must not throw them.
        }

        stop.Dispose();
        _loop = null;
    }

    private static async Task RunAsync(Func<int> step, Action succeeded, Func<bool> inError, TimeSpan pollInterval, CancellationToken stop)
    {
        var backoff = pollInterval;
        while (!stop.IsCancellationRequested)
        {
            var applied = 0;
            try
            {
                applied = step();
                succeeded();
                backoff = pollInterval;
            }
            catch (IndexWriteException)
            {
                // Counted where it happened; the index may now be in Error.
                if (inError())
                {
                    return;
                }

                backoff = TimeSpan.FromTicks(Math.Min(backoff.Ticks * 2, MaxBackoff.Ticks));
                applied = 0;
            }

            if (applied == 0)
            {
                try
                {
                    await Task.Delay(backoff, stop).ConfigureAwait(false);
                }
                catch (OperationCanceledException)
                {
                    return;
                }
            }
        }
    }
}
