using System.Diagnostics;

namespace Indexing.Server.Demo;

/// <summary>
/// The foreground reader's own Get latencies over the last minute: the demo times the Gets it sends
/// through the engine (which the store also counts as foreground traffic, the signal a rebuild's
/// prefetcher backs off on) and reports percentiles over a window.
/// <para>Threading: one recorder, any number of readers; all under one lock.</para>
/// </summary>
internal sealed class GetLatencies
{
    /// <summary>The longest window kept.</summary>
    public static TimeSpan MaxWindow { get; } = TimeSpan.FromSeconds(60);

    private readonly Queue<(long At, long Ticks)> _samples = new();
    private readonly Lock _lock = new();

    /// <summary>Records one Get that started at <paramref name="started"/> (a Stopwatch timestamp) and just ended.</summary>
    public void Record(long started)
    {
        var now = Stopwatch.GetTimestamp();
        var oldest = now - (long)(MaxWindow.TotalSeconds * Stopwatch.Frequency);
        lock (_lock)
        {
            _samples.Enqueue((now, now - started));
            while (_samples.Peek().At < oldest)
            {
                _samples.Dequeue();
            }
        }
    }

    /// <summary>The Gets that ended in the last <paramref name="window"/> (at most <see cref="MaxWindow"/>).</summary>
    public GetLatencySummary Snapshot(TimeSpan window)
    {
        var since = Stopwatch.GetTimestamp() - (long)(Math.Min(window.TotalSeconds, MaxWindow.TotalSeconds) * Stopwatch.Frequency);
        long[] ticks;
        lock (_lock)
        {
            ticks = [.. _samples.Where(s => s.At >= since).Select(s => s.Ticks)];
        }

        if (ticks.Length == 0)
        {
            return new GetLatencySummary(0, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.Zero);
        }

        Array.Sort(ticks);
        return new GetLatencySummary(ticks.Length, At(ticks, 0.50), At(ticks, 0.90), At(ticks, 0.99), Stopwatch.GetElapsedTime(0, ticks[^1]));
    }

    private static TimeSpan At(long[] sorted, double quantile) =>
        Stopwatch.GetElapsedTime(0, sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(quantile * sorted.Length) - 1)]);
}

/// <summary>Gets in a window and their latency percentiles.</summary>
internal readonly record struct GetLatencySummary(long Count, TimeSpan P50, TimeSpan P90, TimeSpan P99, TimeSpan Max);
