namespace Indexing.Prefetcher;

/// <summary>
/// Calls <c>onTick</c> every interval, each jittered by ± <c>jitterFraction</c> so the prefetcher's
/// decisions do not lock step with other periodic work. Runs on the thread pool (a tick computes,
/// it never blocks on I/O). An exception from a tick ends the loop and goes to <c>onFailure</c>,
/// never swallowed. <see cref="StopAsync"/> returns once no tick runs any more.
/// </summary>
internal sealed class TickLoop
{
    private readonly CancellationTokenSource _stop = new();
    private readonly TimeSpan _interval;
    private readonly double _jitterFraction;
    private readonly Action _onTick;
    private readonly Action<Exception> _onFailure;
    private Task _loop = Task.CompletedTask;
    private int _stopped;

    public TickLoop(TimeSpan interval, double jitterFraction, Action onTick, Action<Exception> onFailure)
    {
        _interval = interval;
        _jitterFraction = jitterFraction;
        _onTick = onTick;
        _onFailure = onFailure;
    }

    public void Start() => _loop = Task.Run(RunAsync);

    /// <summary>Asks the loop to stop (idempotent, any thread); no tick starts after this.</summary>
    public void Stop()
    {
        if (Interlocked.Exchange(ref _stopped, 1) == 0)
        {
            _stop.Cancel();
        }
    }

    public async Task StopAsync()
    {
        Stop();
        await _loop.ConfigureAwait(false);
    }

    private async Task RunAsync()
    {
        try
        {
            while (true)
            {
                var jitter = 1 + (_jitterFraction * ((2 * Random.Shared.NextDouble()) - 1));
                await Task.Delay(_interval * jitter, _stop.Token).ConfigureAwait(false);
                _onTick();
            }
        }
        catch (OperationCanceledException) when (_stop.IsCancellationRequested)
        {
        }
        catch (Exception exception)
        {
            _onFailure(exception);
        }
    }
}
