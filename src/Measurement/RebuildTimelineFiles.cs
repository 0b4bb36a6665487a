using System.Globalization;

namespace Indexing.Measurement;

/// <summary>
/// Writes a rebuild's timeline as CSV (one row per sample) and as an SVG plot: one panel per series
/// (concurrency limit, MB/s, consumer wait %, in flight + buffered MiB, foreground p99 ms) over a
/// shared time axis, through <see cref="TimelineFiles"/>.
/// </summary>
public static class RebuildTimelineFiles
{
    private static readonly TimelineColumn<RebuildTimelinePoint>[] _columns =
    [
        new("elapsed_s", p => p.Elapsed.TotalSeconds.ToString("0.000", CultureInfo.InvariantCulture)),
        new("concurrency_limit", p => p.ConcurrencyLimit.ToString(CultureInfo.InvariantCulture)),
        TimelineColumn<RebuildTimelinePoint>.Number("mb_per_s", p => p.MegabytesPerSecond, "0.00"),
        TimelineColumn<RebuildTimelinePoint>.Number("consumer_wait_pct", p => p.ConsumerWaitPercent, "0.0"),
        new("in_flight_and_buffered_bytes", p => p.InFlightAndBufferedBytes.ToString(CultureInfo.InvariantCulture)),
        TimelineColumn<RebuildTimelinePoint>.Number("foreground_p99_ms", p => p.ForegroundP99?.TotalMilliseconds, "0.000"),
    ];

    private static readonly TimelinePanel<RebuildTimelinePoint>[] _panels =
    [
        Panel("concurrency limit L", "#1f77b4", p => p.ConcurrencyLimit),
        Panel("MB/s handed to the consumer", "#2ca02c", p => p.MegabytesPerSecond),
        Panel("consumer (indexer) wait %", "#d62728", p => p.ConsumerWaitPercent),
        Panel("in flight + buffered MiB", "#9467bd", p => p.InFlightAndBufferedBytes / 1048576.0),
        Panel("foreground Get p99 ms", "#ff7f0e", p => p.ForegroundP99?.TotalMilliseconds),
    ];

    public static void WriteCsv(string path, IReadOnlyList<RebuildTimelinePoint> timeline) =>
        TimelineFiles.WriteCsv(path, timeline, _columns);

    public static void WriteSvg(string path, string title, IReadOnlyList<RebuildTimelinePoint> timeline) =>
        TimelineFiles.WriteSvg(path, title, timeline, p => p.Elapsed, _panels);

    private static TimelinePanel<RebuildTimelinePoint> Panel(string title, string colour, Func<RebuildTimelinePoint, double?> value) =>
        new(title, [new TimelineSeries<RebuildTimelinePoint>(title, colour, value)]);
}
