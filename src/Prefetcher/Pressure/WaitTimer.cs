using System.Diagnostics;

namespace Indexing.Prefetcher;

/// <summary>
/// The time one waiter spends waiting, including a wait in progress, so that a tick ending in a
/// long wait sees it. Thread-safe: the waiter begins and ends, the tick loop reads.
/// </summary>
internal sealed class WaitTimer
{
    private readonly Lock _lock = new();
    private long _totalTicks;
    private long _startedAt;
    private bool _waiting;

    public TimeSpan Total
    {
        get
        {
            lock (_lock)
            {
                var ticks = _totalTicks + (_waiting ? Stopwatch.GetTimestamp() - _startedAt : 0);
                return Stopwatch.GetElapsedTime(0, ticks);
            }
        }
    }

    public Scope Measure()
    {
        lock (_lock)
        {
            if (_waiting)
            {
                throw new InvalidOperationException("A wait began on a timer already measuring one; waits on one timer are not nested.");
            }

            _waiting = true;
            _startedAt = Stopwatch.GetTimestamp();
        }

        return new Scope(this);
    }

    public readonly struct Scope(WaitTimer timer) : IDisposable
    {
        public void Dispose()
        {
            lock (timer._lock)
            {
                timer._totalTicks += Stopwatch.GetTimestamp() - timer._startedAt;
                timer._waiting = false;
            }
        }
    }
}
