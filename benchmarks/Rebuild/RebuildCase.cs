using System.Globalization;
using Indexing.Datasets;
using Indexing.Measurement;
using Indexing.Prefetcher;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// One cell of the rebuild tables: a dataset shape at a size, on a device. Its ToString is the
/// table's label, e.g. "rare-giants 256 MB, slow-disk".
/// </summary>
public sealed record RebuildCase(DatasetShape Shape, long TargetBytes, RebuildDevice Device)
{
    /// <summary>The indexing threads' nice value when the table compares it (part of the label); null for the product default.</summary>
    public int? IndexingThreadNice { get; init; }

    /// <summary>The read-bound device (<see cref="RebuildDevice.SlowDisk"/>).</summary>
    public static RebuildDevice SlowDisk => RebuildDevice.SlowDisk;

    /// <summary>The capped modelled disk (<see cref="RebuildDevice.CappedDisk"/>).</summary>
    public static RebuildDevice CappedDisk => RebuildDevice.CappedDisk;

    /// <summary>
    /// <paramref name="megabytes"/> (decimal MB) unless REBUILD_BENCH_MB overrides every size (CI's
    /// dry run uses a few MB).
    /// </summary>
    public static long Megabytes(long megabytes) =>
        long.TryParse(Environment.GetEnvironmentVariable("REBUILD_BENCH_MB"), NumberStyles.Integer, CultureInfo.InvariantCulture, out var mb) && mb > 0
            ? mb
            : megabytes;

    /// <summary>
    /// Each of <paramref name="shapes"/> (every shape when none) at <paramref name="megabytes"/>, on
    /// each device; REBUILD_BENCH_SHAPES (comma-separated names, e.g. "rare-giants,uniform") keeps
    /// only those shapes, and REBUILD_BENCH_DEVICES (e.g. "network-disk") only those devices, to
    /// rerun part of a table.
    /// </summary>
    public static IEnumerable<RebuildCase> Grid(long megabytes, IEnumerable<RebuildDevice> devices, params DatasetShape[] shapes)
    {
        var onlyDevices = DevicesToRun(Environment.GetEnvironmentVariable("REBUILD_BENCH_DEVICES"));
        var deviceList = devices.Where(d => onlyDevices is null || onlyDevices.Contains(d.Name)).ToList();
        var only = Environment.GetEnvironmentVariable("REBUILD_BENCH_SHAPES") is { Length: > 0 } names
            ? names.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(DatasetShapeNames.Parse).ToHashSet()
            : null;
        foreach (var shape in (shapes.Length == 0 ? Enum.GetValues<DatasetShape>() : shapes).Where(s => only is null || only.Contains(s)))
        {
            foreach (var device in deviceList)
            {
                yield return new RebuildCase(shape, Megabytes(megabytes) * 1_000_000, device);
            }
        }
    }

    /// <summary>The device names REBUILD_BENCH_DEVICES may keep: every device a table runs on.</summary>
    public static IReadOnlyList<string> DeviceNames { get; } =
        [RebuildDevice.Local.Name, RebuildDevice.ModelledNetworkDisk().Name, SlowDisk.Name, CappedDisk.Name];

    /// <summary>
    /// The device names in <paramref name="names"/> (comma-separated), or null for every device when
    /// it is empty. A name no table runs on (a typo) throws; a device that one table does not run on
    /// leaves that table without cases.
    /// </summary>
    public static IReadOnlySet<string>? DevicesToRun(string? names)
    {
        if (string.IsNullOrWhiteSpace(names))
        {
            return null;
        }
        var kept = names.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).ToHashSet(StringComparer.Ordinal);
        if (kept.FirstOrDefault(n => !DeviceNames.Contains(n)) is { } unknown)
        {
            throw new ArgumentException($"REBUILD_BENCH_DEVICES: unknown device '{unknown}'; the tables run on {string.Join(", ", DeviceNames)}.", nameof(names));
        }
        return kept;
    }

    public override string ToString() => string.Create(
        CultureInfo.InvariantCulture, $"{Shape.ToName()} {TargetBytes / 1_000_000} MB, {Device.Name}{(IndexingThreadNice is { } nice ? $", nice {nice}" : "")}");
}
