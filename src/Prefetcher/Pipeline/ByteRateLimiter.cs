using System.Diagnostics;

namespace Indexing.Prefetcher;

/// <summary>
/// The MB/s cap: a token bucket of bytes, refilled at the cap rate, holding at most
/// <see cref="BurstTime"/> worth. A read of any size may start once the bucket holds its bytes or
/// is full; it then takes all its bytes, going into debt if it is bigger than the bucket, and the
/// debt delays the reads after it. So a 50 MB document is not blocked forever by a 1 MB bucket, and
/// the long-run rate still honours the cap. Bytes count when a read is issued (its reserved size).
/// <para>
/// The rate changes live; a waiting acquirer re-plans at once (raising the cap, or removing it,
/// releases it immediately). Threading: one acquirer (the planner), rate changes from any thread.
/// </para>
/// </summary>
internal sealed class ByteRateLimiter : IDisposable
{
    /// <summary>The bucket holds this much of the rate: one controller tick's worth.</summary>
    public static readonly TimeSpan BurstTime = TimeSpan.FromMilliseconds(250);

    /// <summary>
    /// The longest single wait. The loop re-checks the bucket after each, so a debt of any size
    /// (a 4 MiB read at 1 B/s is weeks) just waits, instead of overflowing the event's millisecond timeout.
    /// </summary>
    private const double MaxWaitSeconds = 1.0;

    private readonly Lock _lock = new();
    private readonly ManualResetEventSlim _changed = new(false);
    private long? _bytesPerSecond;
    private double _tokens;
    private long _refilledAt = Stopwatch.GetTimestamp();

    public ByteRateLimiter(long? bytesPerSecond)
    {
        _bytesPerSecond = bytesPerSecond;
        _tokens = bytesPerSecond is { } rate ? Burst(rate) : 0;
    }

    public void SetRate(long? bytesPerSecond)
    {
        lock (_lock)
        {
            Refill();
            var wasCapped = _bytesPerSecond is not null;
            _bytesPerSecond = bytesPerSecond;
            if (bytesPerSecond is { } rate)
            {
                // A new cap starts with a full bucket; a changed one keeps its balance (or debt).
                _tokens = wasCapped ? Math.Min(_tokens, Burst(rate)) : Burst(rate);
            }
        }

        _changed.Set();
    }

    /// <summary>Blocks until <paramref name="bytes"/> may be read; the wait (if any) is measured on <paramref name="waitTimer"/>.</summary>
    public void Acquire(long bytes, WaitTimer waitTimer, CancellationToken cancellationToken)
    {
        if (TryTake(bytes, out var wait))
        {
            return;
        }

        using (waitTimer.Measure())
        {
            do
            {
                _changed.Wait(wait, cancellationToken);
                cancellationToken.ThrowIfCancellationRequested();
            }
            while (!TryTake(bytes, out wait));
        }
    }

    public void Dispose() => _changed.Dispose();

    private bool TryTake(long bytes, out TimeSpan wait)
    {
        lock (_lock)
        {
            wait = TimeSpan.Zero;
            if (_bytesPerSecond is not { } rate)
            {
                return true;
            }

            Refill();
            var needed = Math.Min(bytes, Burst(rate));
            if (_tokens >= needed)
            {
                _tokens -= bytes;
                return true;
            }

            wait = TimeSpan.FromSeconds(Math.Min(MaxWaitSeconds, (needed - _tokens) / rate)) + TimeSpan.FromMilliseconds(1);
            _changed.Reset();
            return false;
        }
    }

    private void Refill()
    {
        var now = Stopwatch.GetTimestamp();
        if (_bytesPerSecond is { } rate)
        {
            _tokens = Math.Min(Burst(rate), _tokens + (Stopwatch.GetElapsedTime(_refilledAt, now).TotalSeconds * rate));
        }

        _refilledAt = now;
    }

    private static double Burst(long bytesPerSecond) => Math.Max(1, bytesPerSecond * BurstTime.TotalSeconds);
}
