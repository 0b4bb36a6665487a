using System.Globalization;
using System.Text;

using Indexing.Storage;

namespace Indexing.Datasets;

/// <summary>How big the documents of a collection are, and how size changes along key order.</summary>
/// <remarks>
/// Percentiles are nearest-rank (the smallest size with at least that share of documents at or
/// below it). They are exact for up to <see cref="SizeProfiler.ExactPercentileLimit"/> documents;
/// past that they come from a log-linear histogram and are within
/// <see cref="PercentileRelativeError"/> (under 0.8%) of the exact value. Count, total, min, max and
/// mean are always exact. <see cref="DecileMeanBytes"/> is described on <see cref="SizeProfiler"/>.
/// </remarks>
/// <param name="Count">Number of documents.</param>
/// <param name="TotalBytes">Sum of all sizes.</param>
/// <param name="MinBytes">Smallest size; 0 when there are no documents.</param>
/// <param name="P50Bytes">Median size.</param>
/// <param name="P90Bytes">90th percentile size.</param>
/// <param name="P99Bytes">99th percentile size.</param>
/// <param name="MaxBytes">Largest size.</param>
/// <param name="PercentileRelativeError">0 when percentiles are exact; otherwise the largest relative distance from the exact value.</param>
/// <param name="DecileMeanBytes">Mean size of each tenth of the documents in key order: [0] the first 10% of ids, [9] the last.</param>
public sealed record SizeProfile(
    long Count,
    long TotalBytes,
    long MinBytes,
    long P50Bytes,
    long P90Bytes,
    long P99Bytes,
    long MaxBytes,
    double PercentileRelativeError,
    IReadOnlyList<double> DecileMeanBytes)
{
    private const int BarWidth = 32;

    /// <summary>Mean size; 0 when there are no documents.</summary>
    public double MeanBytes => Count == 0 ? 0 : (double)TotalBytes / Count;

    /// <summary>
    /// Mean of the last tenth over the mean of the first: about 1 when size does not depend on the
    /// key, well above 1 when later documents are bigger. 0 when there are no documents.
    /// </summary>
    public double KeyOrderGrowth => DecileMeanBytes.Count == 0 || DecileMeanBytes[0] == 0 ? 0 : DecileMeanBytes[^1] / DecileMeanBytes[0];

    /// <summary>A console table: totals, percentiles, and a bar per tenth of the key order.</summary>
    public override string ToString()
    {
        var text = new StringBuilder();
        text.Append(CultureInfo.InvariantCulture, $"{Count:N0} documents, {ByteSize.Format(TotalBytes)} in total, mean {ByteSize.Format((long)Math.Round(MeanBytes))}")
            .AppendLine();
        if (Count == 0)
        {
            return text.ToString();
        }

        Row(text, "min", MinBytes);
        Row(text, "p50", P50Bytes);
        Row(text, "p90", P90Bytes);
        Row(text, "p99", P99Bytes);
        Row(text, "max", MaxBytes);
        text.AppendLine(PercentileRelativeError == 0
            ? "  (percentiles exact)"
            : string.Create(CultureInfo.InvariantCulture, $"  (percentiles within {PercentileRelativeError * 100:0.0}%: log-linear histogram)"));

        text.AppendLine("mean size along key order:");
        var widest = DecileMeanBytes.Max();
        for (var i = 0; i < DecileMeanBytes.Count; i++)
        {
            var mean = DecileMeanBytes[i];
            var bar = widest <= 0 ? 0 : (int)Math.Round(BarWidth * mean / widest);
            var tenth = string.Create(CultureInfo.InvariantCulture, $"{i * 10}-{(i + 1) * 10}%");
            text.Append(CultureInfo.InvariantCulture, $"  {tenth,7}  {ByteSize.Format((long)Math.Round(mean)),10}  ")
                .Append('#', Math.Max(bar, mean > 0 ? 1 : 0))
                .AppendLine();
        }

        return text.Append(CultureInfo.InvariantCulture, $"  last tenth / first tenth: {KeyOrderGrowth:0.0}x").AppendLine().ToString();
    }

    private static void Row(StringBuilder text, string label, long bytes) =>
        text.Append(CultureInfo.InvariantCulture, $"  {label}  {ByteSize.Format(bytes),10}").AppendLine();
}
