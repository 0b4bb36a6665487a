using System.Globalization;
using System.Text.RegularExpressions;

namespace Indexing.Server.Tests;

/// <summary>
/// Reads Prometheus text exposition (format 0.0.4) line by line, strictly enough that a malformed
/// line fails the test: comments are HELP/TYPE, every other non-empty line is one sample.
/// </summary>
internal sealed partial class PrometheusText
{
    private PrometheusText(List<Sample> samples, Dictionary<string, string> types)
    {
        Samples = samples;
        Types = types;
    }

    public List<Sample> Samples { get; }

    /// <summary>Metric family name -> its TYPE.</summary>
    public Dictionary<string, string> Types { get; }

    public static PrometheusText Parse(string text)
    {
        var samples = new List<Sample>();
        var types = new Dictionary<string, string>();
        foreach (var line in text.Split('\n'))
        {
            if (line.Length == 0)
            {
                continue;
            }

            if (line.StartsWith('#'))
            {
                var comment = CommentLine().Match(line);
                Assert.True(comment.Success, $"not a HELP/TYPE line: {line}");
                if (comment.Groups["kind"].Value == "TYPE")
                {
                    Assert.Matches("^(counter|gauge|histogram|summary|untyped)$", comment.Groups["rest"].Value);
                    types[comment.Groups["name"].Value] = comment.Groups["rest"].Value;
                }

                continue;
            }

            var match = SampleLine().Match(line);
            Assert.True(match.Success, $"not a sample line: {line}");
            var labels = new Dictionary<string, string>();
            foreach (Match label in LabelPair().Matches(match.Groups["labels"].Value))
            {
                labels[label.Groups["key"].Value] = label.Groups["value"].Value;
            }

            var value = match.Groups["value"].Value switch
            {
                "+Inf" => double.PositiveInfinity,
                "-Inf" => double.NegativeInfinity,
                var number => double.Parse(number, NumberStyles.Float, CultureInfo.InvariantCulture),
            };
            samples.Add(new Sample(match.Groups["name"].Value, labels, value));
        }

        return new PrometheusText(samples, types);
    }

    /// <summary>The one sample of <paramref name="name"/> for prefetch <paramref name="prefetch"/>.</summary>
    public Sample Single(string name, string prefetch)
    {
        var matching = Samples.Where(s => s.Name == name && s.Labels.GetValueOrDefault("prefetch") == prefetch).ToList();
        Assert.True(matching.Count == 1, $"{matching.Count} samples of {name}{{prefetch=\"{prefetch}\"}}; names: {string.Join(", ", Samples.Select(s => s.Name).Distinct())}");
        return matching[0];
    }

    [GeneratedRegex("""^# (?<kind>HELP|TYPE) (?<name>[a-zA-Z_:][a-zA-Z0-9_:]*) ?(?<rest>.*)$""")]
    private static partial Regex CommentLine();

    [GeneratedRegex("""^(?<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?<labels>[^}]*)\})? (?<value>[-+]?(\d+(\.\d*)?([eE][-+]?\d+)?|Inf|NaN))( \d+)?$""")]
    private static partial Regex SampleLine();

    [GeneratedRegex("""(?<key>[a-zA-Z_][a-zA-Z0-9_]*)="(?<value>(\\.|[^"\\])*)",?""")]
    private static partial Regex LabelPair();
}

/// <summary>One sample line: metric name, labels, value.</summary>
internal sealed record Sample(string Name, Dictionary<string, string> Labels, double Value);
