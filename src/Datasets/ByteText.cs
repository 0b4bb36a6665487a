using System.Globalization;

namespace Indexing.Datasets;

// Binary-unit byte counts for specs, errors and the size report: "512 B", "32 MiB", "61.4 KiB".
// Exact multiples print without decimals so a configured limit reads as it was given. (Storage
// has a richer formatter; this project stays independent of Storage, so it keeps its own.)
internal static class ByteText
{
    private static readonly string[] _units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

    public static string Format(double bytes)
    {
        var unit = 0;
        var value = Math.Abs(bytes);
        // Compares the rounded figure, so 1,048,575 B reads "1.0 MiB" rather than "1024.0 KiB".
        while (Math.Round(value, 1) >= 1024 && unit < _units.Length - 1)
        {
            value /= 1024;
            unit++;
        }

        var sign = bytes < 0 ? "-" : "";
        return value == Math.Floor(value)
            ? string.Create(CultureInfo.InvariantCulture, $"{sign}{value:0} {_units[unit]}")
            : string.Create(CultureInfo.InvariantCulture, $"{sign}{value:0.0} {_units[unit]}");
    }
}
