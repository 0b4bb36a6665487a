#:project ../../src/Measurement/Indexing.Measurement.csproj
#:project ../../src/Datasets/Indexing.Datasets.csproj
#:property TreatWarningsAsErrors=false
#:property PublishAot=false

// How fast a prefetch that follows another on the same device reaches its rate (issue 53, item 2:
// 80% of the final rate within 0.5 s, at least 0.85x BestFixed). Reading alone on a modelled disk:
// the first adaptive read (the device knows nothing), a following one (same device memory, as the
// engine's prefetches share it), then fixed L reads for the best fixed rate. Repeats the whole set
// and prints the medians with the load average.
//
//   dotnet run -c Release lab/tools/following-prefetch.cs -- [--size 512MB] [--shape rare-giants]
//       [--device slow-disk|network-disk|capped-disk] [--fixed 8,16,32,64] [--repeat 3] [--directory DIR]
using System.Globalization;
using Indexing.Datasets;
using Indexing.Engine;
using Indexing.Measurement;
using Indexing.Measurement.Measure;
using Indexing.Storage;

var settings = new Dictionary<string, string>();
for (var i = 0; i + 1 < args.Length; i += 2)
{
    settings[args[i].TrimStart('-')] = args[i + 1];
}

var size = long.Parse(settings.GetValueOrDefault("size", "512MB").Replace("MB", "000000").Replace("GB", "000000000"), CultureInfo.InvariantCulture);
var shape = Enum.Parse<DatasetShape>(settings.GetValueOrDefault("shape", "rare-giants").Replace("-", string.Empty), ignoreCase: true);
var repeat = int.Parse(settings.GetValueOrDefault("repeat", "3"), CultureInfo.InvariantCulture);
var fixedL = settings.GetValueOrDefault("fixed", "8,16,32,64").Split(',').Select(l => int.Parse(l, CultureInfo.InvariantCulture)).ToList();
var device = RebuildDevice.Named(settings.GetValueOrDefault("device", "slow-disk"));

var root = Path.Combine(settings.GetValueOrDefault("directory", Path.GetTempPath()), $"following-prefetch-{Guid.NewGuid():N}");
try
{
    var data = Path.Combine(root, "data");
    await using (var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = data }))
    {
        foreach (var chunk in DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: size)).Chunk(1000))
        {
            engine.PutMany(chunk.Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
        }
    }

    var store = Path.Combine(data, "store");
    await ManyIndexesRun.SettleAsync(store, TimeSpan.FromMinutes(5));
    Console.WriteLine($"{shape}, {size:N0} bytes, device {device.Name}; load average before: {File.ReadAllText("/proc/loadavg").Trim()}");
    var runs = new List<IReadOnlyList<FollowingPrefetchFigures>>();
    for (var round = 0; round < repeat; round++)
    {
        var figures = await FollowingPrefetchRun.RunAsync(store, DatasetSpec.DefaultCollection, device, fixedL);
        runs.Add(figures);
        foreach (var figure in figures)
        {
            Console.WriteLine($"round {round + 1}: {figure}");
        }
    }

    Console.WriteLine($"load average after: {File.ReadAllText("/proc/loadavg").Trim()}");
    var bestFixed = runs.Select(r => r.Where(f => f.Label.StartsWith("fixed", StringComparison.Ordinal)).Max(f => f.MeanMegabytesPerSecond)).ToList();
    foreach (var label in new[] { "first", "following" })
    {
        var of = runs.Select(r => r.Single(f => f.Label == label)).ToList();
        var ratios = of.Zip(bestFixed, (f, best) => f.MeanMegabytesPerSecond / best).ToList();
        var to80 = of.Select(f => f.TimeTo80Percent?.TotalSeconds ?? double.NaN).ToList();
        Console.WriteLine(FormattableString.Invariant(
            $"{label}: mean {MeasureResults.Median(of.Select(f => f.MeanMegabytesPerSecond)):0} MB/s, {MeasureResults.Median(ratios):0.00}x BestFixed ({ratios.Min():0.00}-{ratios.Max():0.00}); 80% of the final rate at {MeasureResults.Median(to80):0.00} s ({to80.Min():0.00}-{to80.Max():0.00})"));
    }

    Console.WriteLine(FormattableString.Invariant($"BestFixed: {MeasureResults.Median(bestFixed):0} MB/s (median of the rounds' best fixed L)"));
    return 0;
}
finally
{
    Directory.Delete(root, recursive: true);
}
