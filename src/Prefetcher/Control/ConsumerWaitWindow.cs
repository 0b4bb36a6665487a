namespace Indexing.Prefetcher;

/// <summary>How much of the last <see cref="ControllerOptions.BusyConsumerWindow"/> the indexer spent waiting.</summary>
internal sealed class ConsumerWaitWindow(TimeSpan window)
{
    private readonly Queue<(TimeSpan End, TimeSpan Duration, TimeSpan Waited)> _ticks = new();
    private TimeSpan _waited;

    /// <summary>Length of the ticks in the window.</summary>
    public TimeSpan Duration { get; private set; }

    /// <summary>Share of the window the indexer waited, in [0, 1]; 0 before any tick.</summary>
    public double WaitFraction => Duration > TimeSpan.Zero ? Math.Clamp(_waited / Duration, 0, 1) : 0;

    public void Observe(TimeSpan now, TimeSpan tickDuration, double waitFraction)
    {
        var waited = tickDuration * waitFraction;
        _ticks.Enqueue((now, tickDuration, waited));
        Duration += tickDuration;
        _waited += waited;
        while (_ticks.Peek().End <= now - window)
        {
            var old = _ticks.Dequeue();
            Duration -= old.Duration;
            _waited -= old.Waited;
        }
    }
}
