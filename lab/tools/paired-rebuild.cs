#:project ../../benchmarks/Indexing.Benchmarks.csproj
#:property TreatWarningsAsErrors=false
#:property PublishAot=false

// The rebuild on the read-bound device against its bound, in pairs: Adaptive and IndexOnly run
// alternately on one store (ABBA order, after a warm-up pair that is not counted), so that a change
// of the shared machine's load moves both halves of a pair alike. BenchmarkDotNet's table runs each
// method's three iterations back to back, minutes apart from the other's, and on a noisy machine
// that moved IndexOnly's median by up to 50% between two runs of the same commit
// (benchmarks/results/README.md, "Rebuild vs its bound and FixedBatch").
//
//   dotnet run lab/tools/paired-rebuild.cs -- [--shapes growing,lognormal,rare-giants,uniform] [--size 256MB]
//       [--pairs 5] [--directory DIR]
//
// The device is the rebuild table's slow disk (the modelled disk at 8 MB/s per stream, 4 ms per
// request, 16 deep), where reading alone at the best fixed L takes 2.4-3.4 s for 256 MB and
// indexing alone 6-13 s: the bound max(BestFixed, IndexOnly) is IndexOnly. The index is the rebuild
// benchmarks' (six fields), with the product's default options; both come from the benchmarks
// project. Prints one line per run, then per shape the median of the pairs' ratios (Adaptive's
// wall over IndexOnly's), Adaptive's median stall and the commits, with /proc/loadavg before and
// after: quote figures with the load average.
//
// Each pair also reads the collection alone (ReadOnly, on the same device) for the processor-time
// floor: on a machine whose cores indexing already keeps busy, reading cannot overlap for free, and
// a rebuild takes at least 1 + ReadOnly's processor time / IndexOnly's times IndexOnly's wall (if it
// keeps the cores as busy). The summary gives the median of that floor beside the ratio, and
// Adaptive's processor time over IndexOnly's plus ReadOnly's: what the rebuild spends beyond the
// two halves it is made of.
using System.Globalization;
using Indexing;
using Indexing.Benchmarks.Rebuild;
using Indexing.Datasets;
using Indexing.Measurement;

var settings = new Dictionary<string, string>();
for (var i = 0; i + 1 < args.Length; i += 2)
{
    settings[args[i].TrimStart('-')] = args[i + 1];
}

var shapes = settings.GetValueOrDefault("shapes", "growing,lognormal,rare-giants,uniform").Split(',')
    .Select(name => Enum.Parse<DatasetShape>(name.Replace("-", ""), ignoreCase: true)).ToList();
if (!ByteSize.TryParse(settings.GetValueOrDefault("size", "256MB"), out var size))
{
    Console.Error.WriteLine($"--size {settings["size"]} is not a size such as 256MB");
    return 2;
}

var pairs = int.Parse(settings.GetValueOrDefault("pairs", "5"), CultureInfo.InvariantCulture);
if (pairs < 1)
{
    Console.Error.WriteLine($"--pairs {pairs}: at least 1 pair is needed (the warm-up pair is not counted)");
    return 2;
}

var root = Path.Combine(settings.GetValueOrDefault("directory", Path.GetTempPath()), $"paired-rebuild-{Guid.NewGuid():N}");
// The rebuild table's device and index.
var device = RebuildCase.SlowDisk;
var definition = RebuildBenchmarkBase.Orders;

Console.WriteLine($"load average before: {File.ReadAllText("/proc/loadavg").Trim()}");
var summaries = new List<string>();
try
{
    foreach (var shape in shapes)
    {
        // Loaded as the rebuild benchmarks load theirs.
        var (loaded, compacted) = RebuildBenchmarkBase.LoadStore(shape, size, Path.Combine(root, shape.ToName(), "store"));
        using var store = loaded;
        if (!compacted)
        {
            Console.Error.WriteLine($"{shape.ToName()}: RocksDB still compacting after 5 minutes; the runs would share the disk with it.");
            return 1;
        }

        var workload = new RebuildWorkload(store, definition, Path.Combine(root, shape.ToName(), "indexes"));
        await workload.LoadIntoMemoryAsync();

        var ratios = new List<double?>();
        var floors = new List<double?>();
        var beyond = new List<double?>();
        var stalls = new List<double?>();
        var commits = new List<string>();
        for (var pair = 0; pair <= pairs; pair++)
        {
            // ABBA: the first of a pair alternates, so that neither half always runs first.
            var order = pair % 2 == 0
                ? new[] { RebuildMode.IndexOnly, RebuildMode.Adaptive, RebuildMode.ReadOnly }
                : [RebuildMode.Adaptive, RebuildMode.IndexOnly, RebuildMode.ReadOnly];
            var figures = new Dictionary<RebuildMode, RebuildFigures>();
            foreach (var mode in order)
            {
                var run = await workload.RunAsync(mode, device);
                figures[mode] = run;
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{shape.ToName()} pair {pair}{(pair == 0 ? " (warm-up)" : "")} {mode}: {run.Elapsed.TotalSeconds:0.00} s, CPU {run.ProcessorTime?.TotalSeconds:0.00} s, " +
                    $"stall {run.IndexerStallPercent:0.0}%, mean L {run.MeanConcurrency:0.0}, commits {run.Commits}"));
            }

            if (pair > 0)
            {
                ratios.Add(figures[RebuildMode.Adaptive].Elapsed / figures[RebuildMode.IndexOnly].Elapsed);
                if (figures[RebuildMode.Adaptive].ProcessorTime is { } adaptiveCpu
                    && figures[RebuildMode.IndexOnly].ProcessorTime is { } indexingCpu
                    && figures[RebuildMode.ReadOnly].ProcessorTime is { } readingCpu)
                {
                    floors.Add(1 + readingCpu / indexingCpu);
                    beyond.Add(adaptiveCpu / (indexingCpu + readingCpu));
                }

                stalls.Add(figures[RebuildMode.Adaptive].IndexerStallPercent);
                commits.Add($"{figures[RebuildMode.Adaptive].Commits}/{figures[RebuildMode.IndexOnly].Commits}");
            }
        }

        var summary = string.Create(CultureInfo.InvariantCulture,
            $"{shape.ToName()} {size / 1_000_000} MB on {device.Name}: Adaptive / IndexOnly median {RebuildFigures.Median(ratios):0.00} " +
            $"(pairs {Pairs(ratios)}); processor-time floor median {RebuildFigures.Median(floors):0.00} (pairs {Pairs(floors)}); " +
            $"Adaptive's processor time over IndexOnly's + ReadOnly's median {RebuildFigures.Median(beyond):0.00}; " +
            $"Adaptive's stall median {RebuildFigures.Median(stalls):0.0}% (max {stalls.Max():0.0}%); commits Adaptive/IndexOnly {string.Join(", ", commits)}");
        summaries.Add(summary);
        Console.WriteLine(summary);
    }
}
finally
{
    if (Directory.Exists(root))
    {
        Directory.Delete(root, recursive: true);
    }
}

Console.WriteLine();
summaries.ForEach(Console.WriteLine);
Console.WriteLine($"load average after: {File.ReadAllText("/proc/loadavg").Trim()}");
return 0;

static string Pairs(IEnumerable<double?> values) => string.Join(", ", values.Select(value => value?.ToString("0.00", CultureInfo.InvariantCulture)));
