using System.Globalization;
using System.Text;

namespace Indexing.Measurement;

/// <summary>
/// Writes a run's timeline as CSV (one row per sample) and as an SVG plot: one panel per series
/// (concurrency limit, MB/s, consumer wait %, in flight + buffered MiB, foreground p99 ms) over a
/// shared time axis. Plain SVG text, so no plotting dependency; any browser renders it.
/// </summary>
public static class RebuildTimelineFiles
{
    private const int Width = 900;
    private const int PanelHeight = 110;
    private const int Left = 70;
    private const int Right = 20;
    private const int Top = 40;
    private const int Gap = 28;

    private static readonly (string Title, string Colour, Func<RebuildTimelinePoint, double?> Value)[] _series =
    [
        ("concurrency limit L", "#1f77b4", p => p.ConcurrencyLimit),
        ("MB/s handed to the consumer", "#2ca02c", p => p.MegabytesPerSecond),
        ("consumer (indexer) wait %", "#d62728", p => p.ConsumerWaitPercent),
        ("in flight + buffered MiB", "#9467bd", p => p.InFlightAndBufferedBytes / 1048576.0),
        ("foreground Get p99 ms", "#ff7f0e", p => p.ForegroundP99?.TotalMilliseconds),
    ];

    public static void WriteCsv(string path, IReadOnlyList<RebuildTimelinePoint> timeline)
    {
        ArgumentNullException.ThrowIfNull(timeline);
        var text = new StringBuilder("elapsed_s,concurrency_limit,mb_per_s,consumer_wait_pct,in_flight_and_buffered_bytes,foreground_p99_ms\n");
        foreach (var p in timeline)
        {
            text.Append(CultureInfo.InvariantCulture,
                $"{p.Elapsed.TotalSeconds:0.000},{p.ConcurrencyLimit},{p.MegabytesPerSecond:0.00},{p.ConsumerWaitPercent:0.0},{p.InFlightAndBufferedBytes},{p.ForegroundP99?.TotalMilliseconds.ToString("0.000", CultureInfo.InvariantCulture)}\n");
        }

        File.WriteAllText(path, text.ToString());
    }

    public static void WriteSvg(string path, string title, IReadOnlyList<RebuildTimelinePoint> timeline)
    {
        ArgumentNullException.ThrowIfNull(timeline);
        var height = Top + (_series.Length * (PanelHeight + Gap)) + 20;
        var seconds = Math.Max(0.001, timeline.Count == 0 ? 1 : timeline[^1].Elapsed.TotalSeconds);
        var plotWidth = Width - Left - Right;
        var svg = new StringBuilder();
        svg.Append(CultureInfo.InvariantCulture, $"""<svg xmlns="http://www.w3.org/2000/svg" width="{Width}" height="{height}" font-family="sans-serif" font-size="11">""").Append('\n');
        svg.Append(CultureInfo.InvariantCulture, $"""<rect width="{Width}" height="{height}" fill="white"/><text x="{Left}" y="20" font-size="14">{Escape(title)}</text>""").Append('\n');
        for (var i = 0; i < _series.Length; i++)
        {
            var (name, colour, value) = _series[i];
            var top = Top + (i * (PanelHeight + Gap));
            var values = timeline.Select(p => (p.Elapsed.TotalSeconds, Value: value(p))).ToList();
            var max = values.Select(v => v.Value ?? 0).DefaultIfEmpty(0).Max();
            max = max <= 0 ? 1 : max * 1.1;
            svg.Append(CultureInfo.InvariantCulture, $"""<rect x="{Left}" y="{top}" width="{plotWidth}" height="{PanelHeight}" fill="none" stroke="#bbb"/>""");
            svg.Append(CultureInfo.InvariantCulture, $"""<text x="{Left + 4}" y="{top - 4}">{Escape(name)}</text>""");
            svg.Append(CultureInfo.InvariantCulture, $"""<text x="{Left - 4}" y="{top + 10}" text-anchor="end">{max:0.#}</text><text x="{Left - 4}" y="{top + PanelHeight}" text-anchor="end">0</text>""");
            var points = new StringBuilder();
            foreach (var (x, y) in values)
            {
                if (y is { } known)
                {
                    points.Append(CultureInfo.InvariantCulture, $"{Left + (x / seconds * plotWidth):0.0},{top + PanelHeight - (known / max * PanelHeight):0.0} ");
                }
            }

            svg.Append(CultureInfo.InvariantCulture, $"""<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{points.ToString().TrimEnd()}"/>""").Append('\n');
        }

        var axis = Top + (_series.Length * (PanelHeight + Gap)) - Gap + 14;
        svg.Append(CultureInfo.InvariantCulture, $"""<text x="{Left}" y="{axis}">0 s</text><text x="{Width - Right}" y="{axis}" text-anchor="end">{seconds:0.0} s</text>""").Append('\n');
        svg.Append("</svg>\n");
        File.WriteAllText(path, svg.ToString());
    }

    private static string Escape(string text) => text.Replace("&", "&amp;", StringComparison.Ordinal).Replace("<", "&lt;", StringComparison.Ordinal).Replace(">", "&gt;", StringComparison.Ordinal);
}
