namespace Indexing.Indexer;

/// <summary>
/// The background loop of a <see cref="DocumentIndex"/> that refreshes its query view every
/// <see cref="IndexOptions.RefreshInterval"/>, so that what was written becomes visible to queries
/// without a commit. Owns the loop's task; what one refresh does (under the index's write gate,
/// skipped during a build, a failure recorded and rolled back) is the index's.
/// </summary>
/// <remarks>
/// Threading: started once, when the index opens; ends when the index's closing token is cancelled,
/// or when a refresh finds the engine closed. <see cref="Wait"/> is called by the index's dispose.
/// </remarks>
internal sealed class RefreshLoop
{
    private readonly Task _loop;

    /// <summary>
    /// Starts the loop: <paramref name="refresh"/> runs once per tick and returns false when the
    /// loop should end (the engine is closed).
    /// </summary>
    public RefreshLoop(Func<bool> refresh, TimeSpan interval, CancellationToken closing) =>
        _loop = Task.Run(() => RunAsync(refresh, interval, closing));

    /// <summary>Blocks until the loop ended or <paramref name="timeout"/> passed, whatever its outcome.</summary>
    public void Wait(TimeSpan timeout) =>
        _loop.WaitAsync(timeout).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing).GetAwaiter().GetResult();

    private static async Task RunAsync(Func<bool> refresh, TimeSpan interval, CancellationToken closing)
    {
        using var timer = new PeriodicTimer(interval);
        try
        {
            while (await timer.WaitForNextTickAsync(closing).ConfigureAwait(false))
            {
                if (!refresh())
                {
                    return;
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Closing.
        }
    }
}
