using System.Globalization;
using Indexing.Datasets;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// One cell of the rebuild tables: a dataset shape at a size, on a device. Its ToString is the
/// table's label, e.g. "rare-giants 60 MB, network-disk".
/// </summary>
public sealed record RebuildCase(DatasetShape Shape, long TargetBytes, RebuildDevice Device)
{
    // Sizes that make one rebuild take several seconds on a 2-core machine; rare-giants is larger
    // so that its handful of 2-20 MiB giants (one document in 200) is not one or two documents.
    // REBUILD_BENCH_MB overrides every shape (CI's dry run uses a few MB).
    private static readonly Dictionary<DatasetShape, long> _megabytes = new()
    {
        [DatasetShape.Uniform] = 30,
        [DatasetShape.LogNormal] = 30,
        [DatasetShape.Growing] = 30,
        [DatasetShape.RareGiants] = 60,
    };

    public static long MegabytesFor(DatasetShape shape) =>
        long.TryParse(Environment.GetEnvironmentVariable("REBUILD_BENCH_MB"), NumberStyles.Integer, CultureInfo.InvariantCulture, out var mb) && mb > 0
            ? mb
            : _megabytes[shape];

    /// <summary>Every shape, each on the local disk and on the modelled network disk (default parameters).</summary>
    public static IEnumerable<RebuildCase> All(params DatasetShape[] shapes)
    {
        foreach (var shape in shapes.Length == 0 ? Enum.GetValues<DatasetShape>() : shapes)
        {
            yield return new RebuildCase(shape, MegabytesFor(shape) * 1_000_000, RebuildDevice.Local);
            yield return new RebuildCase(shape, MegabytesFor(shape) * 1_000_000, RebuildDevice.ModelledNetworkDisk());
        }
    }

    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"{Shape.ToName()} {TargetBytes / 1_000_000} MB, {Device.Name}");
}
