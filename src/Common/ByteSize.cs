using System.Globalization;

namespace Indexing;

/// <summary>Formats byte counts for messages and effective-config text, in binary units.</summary>
/// <remarks>
/// An exact multiple of a unit prints without decimals ("64 MiB"); anything else prints one
/// rounded decimal ("70.2 MiB", "4.0 KiB" for 4,097 bytes), so a reader can tell a rounded
/// figure from an exact one. <see cref="FormatExact"/> adds the byte count when that matters,
/// e.g. when a document is over a limit by a few bytes and both would round to the same text.
/// </remarks>
internal static class ByteSize
{
    private const int UnitShift = 10;
    private static readonly string[] _units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

    /// <summary>Formats <paramref name="bytes"/> as e.g. "512 B", "4 KiB", "70.2 MiB", "1.5 GiB".</summary>
    public static string Format(long bytes) => Format(bytes, out _);

    /// <summary>
    /// Formats like <see cref="Format(long)"/>, and when that text is rounded adds the exact
    /// count: "64.0 MiB (67,108,865 B)".
    /// </summary>
    public static string FormatExact(long bytes)
    {
        var text = Format(bytes, out var exact);
        return exact ? text : string.Create(CultureInfo.InvariantCulture, $"{text} ({bytes:N0} B)");
    }

    /// <summary>
    /// Parses a size as people write it in configuration: "1048576", "512 KiB", "64MiB", "1.5 GiB",
    /// "300 MB" (decimal units are 10^3 steps, binary ones 2^10; "K", "M", "G", "T" alone are binary).
    /// Case-insensitive; false for anything else, a negative value, or one over <see cref="long.MaxValue"/>.
    /// </summary>
    public static bool TryParse(string? text, out long bytes)
    {
        bytes = 0;
        var span = text.AsSpan().Trim();
        var split = 0;
        while (split < span.Length && (char.IsAsciiDigit(span[split]) || span[split] == '.'))
        {
            split++;
        }

        if (split == 0 || !decimal.TryParse(span[..split], NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var number))
        {
            return false;
        }

        var multiplier = span[split..].Trim().ToString().ToUpperInvariant() switch
        {
            "" or "B" => 1m,
            "K" or "KIB" => 1L << 10,
            "M" or "MIB" => 1L << 20,
            "G" or "GIB" => 1L << 30,
            "T" or "TIB" => 1L << 40,
            "KB" => 1e3m,
            "MB" => 1e6m,
            "GB" => 1e9m,
            "TB" => 1e12m,
            _ => -1m,
        };
        if (multiplier < 0 || number * multiplier > long.MaxValue)
        {
            return false;
        }

        bytes = (long)decimal.Round(number * multiplier);
        return true;
    }

    private static string Format(long bytes, out bool exact)
    {
        // Negative counts only appear in messages about bad input; long.MinValue has no positive twin.
        var magnitude = bytes < 0 ? (ulong)(-(bytes + 1)) + 1 : (ulong)bytes;
        var text = FormatMagnitude(magnitude, out exact);
        return bytes < 0 ? "-" + text : text;
    }

    private static string FormatMagnitude(ulong bytes, out bool exact)
    {
        var unit = 0;
        while (unit < _units.Length - 1 && bytes >> (UnitShift * (unit + 1)) != 0)
        {
            unit++;
        }

        var shift = UnitShift * unit;
        exact = (bytes & ((1UL << shift) - 1)) == 0;
        if (exact)
        {
            return string.Create(CultureInfo.InvariantCulture, $"{bytes >> shift} {_units[unit]}");
        }

        var value = Math.Round(bytes / (double)(1UL << shift), 1, MidpointRounding.AwayFromZero);
        // Without this, 1,048,575 B would read "1024.0 KiB".
        if (value >= 1 << UnitShift && unit < _units.Length - 1)
        {
            unit++;
            value /= 1 << UnitShift;
        }

        return string.Create(CultureInfo.InvariantCulture, $"{value:0.0} {_units[unit]}");
    }
}
