using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// Turns the store's foreground read-latency histogram into the controller's foreground p99
/// input, once per tick.
/// <para>
/// The histogram counts whole seconds and its current second is still filling: a 250 ms tick can
/// land 10 ms into it, and a 1 s window then held only the few Gets of those 10 ms, whose "p99"
/// is their maximum; one slow Get halved L. So the window is 2 s (the full second before plus the
/// current one: between 1 and 2 s of records), and a p99 of fewer than <see cref="MinSamples"/>
/// Gets is no signal at all: with 50 samples the p99 is still the maximum of 50, but one outlier
/// no longer decides alone in a quiet second (the controller also filters its idle baseline).
/// </para>
/// </summary>
internal static class ForegroundSignal
{
    /// <summary>Fewer foreground Gets than this in the window: no foreground signal this tick.</summary>
    public const int MinSamples = 50;

    private static readonly TimeSpan _window = TimeSpan.FromSeconds(2);

    // Null also when every Get was faster than the histogram's resolution (P99 reads 0): the
    // controller treats a zero p99 as misuse, not as "idle".
    public static TimeSpan? P99(LatencyHistogram? histogram) =>
        histogram?.Snapshot(_window) is { Count: >= MinSamples } summary && summary.P99 > TimeSpan.Zero
            ? summary.P99
            : null;
}
