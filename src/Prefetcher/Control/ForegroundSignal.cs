using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// The controller's foreground p99 from the store's histogram. Its current second is still
/// filling, so a 1 s window could hold a few Gets whose "p99" is their maximum: the window is 2 s,
/// and fewer than <see cref="MinSamples"/> Gets are no signal.
/// </summary>
internal static class ForegroundSignal
{
    /// <summary>Fewer foreground Gets than this in the window: no foreground signal this tick.</summary>
    public const int MinSamples = 50;

    private static readonly TimeSpan _window = TimeSpan.FromSeconds(2);

    // Null also when every Get was faster than the histogram's resolution (P99 reads 0), which the controller rejects.
    public static TimeSpan? P99(LatencyHistogram? histogram) =>
        histogram?.Snapshot(_window) is { Count: >= MinSamples } summary && summary.P99 > TimeSpan.Zero
            ? summary.P99
            : null;
}
