using System.Globalization;
using System.Text;

namespace Indexing.Measurement;

/// <summary>One CSV column of a timeline: its header and how a sample writes it (empty for none).</summary>
public sealed record TimelineColumn<T>(string Header, Func<T, string> Value)
{
    /// <summary>A number written invariantly with <paramref name="format"/>; null writes an empty cell.</summary>
    public static TimelineColumn<T> Number(string header, Func<T, double?> value, string format = "0.###") =>
        new(header, sample => value(sample)?.ToString(format, CultureInfo.InvariantCulture) ?? string.Empty);
}

/// <summary>One line in a plot panel: its legend, colour and value (null leaves a gap).</summary>
public sealed record TimelineSeries<T>(string Label, string Colour, Func<T, double?> Value);

/// <summary>One panel of the plot: a title and the lines drawn in it over the shared time axis.</summary>
public sealed record TimelinePanel<T>(string Title, IReadOnlyList<TimelineSeries<T>> Series);

/// <summary>
/// Writes a timeline of any sample type as CSV (one row per sample) and as an SVG plot: stacked
/// panels over a shared time axis, each with one or more lines and a legend. Plain SVG text, so no
/// plotting dependency; any browser renders it. <see cref="RebuildTimelineFiles"/> is one use.
/// </summary>
public static class TimelineFiles
{
    private const int Width = 900;
    private const int PanelHeight = 110;
    private const int Left = 70;
    private const int Right = 20;
    private const int Top = 40;
    private const int Gap = 28;

    public static void WriteCsv<T>(string path, IReadOnlyList<T> timeline, IReadOnlyList<TimelineColumn<T>> columns)
    {
        ArgumentNullException.ThrowIfNull(timeline);
        ArgumentNullException.ThrowIfNull(columns);
        var text = new StringBuilder().AppendJoin(',', columns.Select(c => c.Header)).Append('\n');
        foreach (var sample in timeline)
        {
            text.AppendJoin(',', columns.Select(c => c.Value(sample))).Append('\n');
        }

        File.WriteAllText(path, text.ToString());
    }

    /// <summary>
    /// Writes the plot. With <paramref name="phase"/>, a grey vertical line across every panel marks
    /// each sample whose phase differs from the one before, labelled with the new phase.
    /// </summary>
    public static void WriteSvg<T>(
        string path, string title, IReadOnlyList<T> timeline, Func<T, TimeSpan> elapsed, IReadOnlyList<TimelinePanel<T>> panels, Func<T, string>? phase = null)
    {
        ArgumentNullException.ThrowIfNull(timeline);
        ArgumentNullException.ThrowIfNull(panels);
        var height = Top + (panels.Count * (PanelHeight + Gap)) + 54;
        var seconds = Math.Max(0.001, timeline.Count == 0 ? 1 : elapsed(timeline[^1]).TotalSeconds);
        var plotWidth = Width - Left - Right;
        var svg = new StringBuilder();
        svg.Append(CultureInfo.InvariantCulture, $"""<svg xmlns="http://www.w3.org/2000/svg" width="{Width}" height="{height}" font-family="sans-serif" font-size="11">""").Append('\n');
        svg.Append(CultureInfo.InvariantCulture, $"""<rect width="{Width}" height="{height}" fill="white"/><text x="{Left}" y="20" font-size="14">{Escape(title)}</text>""").Append('\n');
        for (var i = 0; i < panels.Count; i++)
        {
            var panel = panels[i];
            var top = Top + (i * (PanelHeight + Gap));
            var max = panel.Series.SelectMany(s => timeline.Select(p => s.Value(p) ?? 0)).DefaultIfEmpty(0).Max();
            max = max <= 0 ? 1 : max * 1.1;
            svg.Append(CultureInfo.InvariantCulture, $"""<rect x="{Left}" y="{top}" width="{plotWidth}" height="{PanelHeight}" fill="none" stroke="#bbb"/>""");
            svg.Append(CultureInfo.InvariantCulture, $"""<text x="{Left + 4}" y="{top - 4}">{Escape(panel.Title)}</text>""");
            svg.Append(CultureInfo.InvariantCulture, $"""<text x="{Left - 4}" y="{top + 10}" text-anchor="end">{max:0.#}</text><text x="{Left - 4}" y="{top + PanelHeight}" text-anchor="end">0</text>""");
            if (panel.Series.Count > 1)
            {
                // The legend, right-aligned above the panel, last series rightmost.
                var x = Width - Right;
                for (var s = panel.Series.Count - 1; s >= 0; s--)
                {
                    var series = panel.Series[s];
                    svg.Append(CultureInfo.InvariantCulture, $"""<text x="{x}" y="{top - 4}" text-anchor="end" fill="{series.Colour}">{Escape(series.Label)}</text>""");
                    x -= (series.Label.Length * 6) + 12;
                }
            }

            foreach (var series in panel.Series)
            {
                var points = new StringBuilder();
                foreach (var sample in timeline)
                {
                    if (series.Value(sample) is { } known)
                    {
                        points.Append(CultureInfo.InvariantCulture, $"{Left + (elapsed(sample).TotalSeconds / seconds * plotWidth):0.0},{top + PanelHeight - (known / max * PanelHeight):0.0} ");
                    }
                }

                svg.Append(CultureInfo.InvariantCulture, $"""<polyline fill="none" stroke="{series.Colour}" stroke-width="1.5" points="{points.ToString().TrimEnd()}"/>""").Append('\n');
            }
        }

        if (phase is not null)
        {
            var bottom = Top + (panels.Count * (PanelHeight + Gap)) - Gap;
            string? previous = null;
            var lastLabelEnd = double.MinValue;
            var row = 0;
            foreach (var sample in timeline)
            {
                var current = phase(sample);
                if (current != previous)
                {
                    var x = Left + (elapsed(sample).TotalSeconds / seconds * plotWidth);
                    // Phases seconds apart would print over each other: such a label goes one row lower.
                    row = x < lastLabelEnd ? (row + 1) % 3 : 0;
                    svg.Append(CultureInfo.InvariantCulture, $"""<line x1="{x:0.0}" y1="{Top}" x2="{x:0.0}" y2="{bottom + (row * 11)}" stroke="#999" stroke-dasharray="3,3"/>""");
                    svg.Append(CultureInfo.InvariantCulture, $"""<text x="{x + 2:0.0}" y="{bottom + 12 + (row * 11)}" fill="#666">{Escape(current)}</text>""").Append('\n');
                    lastLabelEnd = Math.Max(lastLabelEnd, x + 4 + (current.Length * 6));
                    previous = current;
                }
            }
        }

        var axis = Top + (panels.Count * (PanelHeight + Gap)) - Gap + (phase is null ? 14 : 48);
        svg.Append(CultureInfo.InvariantCulture, $"""<text x="{Left}" y="{axis}">0 s</text><text x="{Width - Right}" y="{axis}" text-anchor="end">{seconds:0.0} s</text>""").Append('\n');
        svg.Append("</svg>\n");
        File.WriteAllText(path, svg.ToString());
    }

    private static string Escape(string text) => text.Replace("&", "&amp;", StringComparison.Ordinal).Replace("<", "&lt;", StringComparison.Ordinal).Replace(">", "&gt;", StringComparison.Ordinal);
}
