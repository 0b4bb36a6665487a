using System.Globalization;

namespace Indexing.Prefetcher;

/// <summary>
/// Numbers in controller reasons and option summaries, culture-independent: rates in decimal MB, as
/// disk vendors quote them (sizes go through <see cref="ByteSize"/>, binary, as buffers are allocated).
/// </summary>
internal static class ControlText
{
    private const double BytesPerMegabyte = 1_000_000;

    /// <summary>"12.4 ms", "1.56 ms" below 10 ms (not "1.6 ms > 1.6 ms"), "1.2 s", "10 min" for whole minutes.</summary>
    public static string Duration(TimeSpan value)
    {
        if (value >= TimeSpan.FromMinutes(1) && value.Ticks % TimeSpan.TicksPerMinute == 0)
        {
            return Invariant($"{value.TotalMinutes:0} min");
        }
        if (value >= TimeSpan.FromSeconds(1))
        {
            return Invariant($"{value.TotalSeconds:0.0} s");
        }
        return value < TimeSpan.FromMilliseconds(10)
            ? Invariant($"{value.TotalMilliseconds:0.0#} ms")
            : Invariant($"{value.TotalMilliseconds:0.0} ms");
    }

    public static string Rate(double bytesPerSecond) => Invariant($"{bytesPerSecond / BytesPerMegabyte:0.#} MB/s");

    /// <summary>A fraction as a whole percentage: 0.93 → "93%".</summary>
    public static string Percent(double fraction) => Invariant($"{fraction * 100:0}%");

    /// <summary>A relative change with its sign: 0.18 → "+18%", -0.02 → "-2%", -0.004 → "+0%" (adding 0.0 turns -0 into 0).</summary>
    public static string Change(double fraction) => Invariant($"{Math.Round(fraction * 100) + 0.0:+0;-0;+0}%");

    public static string Factor(double value) => Invariant($"{value:0.0#}x");

    public static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
