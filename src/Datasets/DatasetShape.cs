using Indexing.Storage;

namespace Indexing.Datasets;

/// <summary>How document sizes are spread over a generated dataset, in key order.</summary>
public enum DatasetShape
{
    /// <summary>Every document about 4 KiB (±10%): the case a fixed batch size handles well.</summary>
    Uniform,

    /// <summary>Median 4 KiB, sigma 1.5: mostly small, with a heavy tail of large documents.</summary>
    LogNormal,

    /// <summary>Sizes grow geometrically about 100x from the first key to the last (1 KiB to 100 KiB, with noise).</summary>
    Growing,

    /// <summary>99.5% about 2 KiB; one document in every 200 is a giant of 2 to 20 MiB.</summary>
    RareGiants,
}

/// <summary>The command-line names of <see cref="DatasetShape"/>: uniform, lognormal, growing, rare-giants.</summary>
public static class DatasetShapeNames
{
    private static readonly (string Name, DatasetShape Shape)[] _names =
    [
        ("uniform", DatasetShape.Uniform),
        ("lognormal", DatasetShape.LogNormal),
        ("growing", DatasetShape.Growing),
        ("rare-giants", DatasetShape.RareGiants),
    ];

    /// <summary>Every accepted name, in declaration order.</summary>
    public static IReadOnlyList<string> All { get; } = Array.ConvertAll(_names, n => n.Name);

    /// <summary>The command-line name of <paramref name="shape"/>, e.g. "rare-giants".</summary>
    public static string ToName(this DatasetShape shape)
    {
        foreach (var (name, known) in _names)
        {
            if (known == shape)
            {
                return name;
            }
        }

        throw new ArgumentOutOfRangeException(
            nameof(shape), shape, $"dataset shape {(int)shape} is not a defined {nameof(DatasetShape)}; use one of: {string.Join(", ", All)}.");
    }

    /// <summary>Parses a command-line name (case-insensitive, surrounding spaces ignored).</summary>
    /// <exception cref="ArgumentException">The name is none of <see cref="All"/>; the message lists them.</exception>
    public static DatasetShape Parse(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (TryParse(name, out var shape))
        {
            return shape;
        }

        throw new ArgumentException(
            $"unknown dataset shape {MessageText.Quote(name)}; the allowed shapes are: {string.Join(", ", All)}.", nameof(name));
    }

    /// <summary>Parses a command-line name without throwing.</summary>
    public static bool TryParse(string? name, out DatasetShape shape)
    {
        var trimmed = name.AsSpan().Trim();
        foreach (var (known, value) in _names)
        {
            if (trimmed.Equals(known, StringComparison.OrdinalIgnoreCase))
            {
                shape = value;
                return true;
            }
        }

        shape = default;
        return false;
    }
}
