#:project ../../src/Engine/Indexing.Engine.csproj
#:project ../../src/Datasets/Indexing.Datasets.csproj
#:property TreatWarningsAsErrors=false
#:property PublishAot=false

// Measures a bulk build (DocumentIndex.BuildAsync from the sequential prefetcher over a store) and
// what each of its bulk commits costs: the time the commit took, read from the index's status
// (Metrics.CommitTime grows by one commit's time at each commit; polled every 2 ms, and commits
// are at least a second apart). Public API only. Generates the dataset into a store once per run.
//
//   dotnet run lab/tools/measure-bulk-build.cs -- [--size 128MiB] [--shape lognormal] [--repeat 3]
//       [--bulk-commit-s 2[,10]] [--bulk-commit-share 0.05[,1]] [--build-ram-mb 64] [--threads 1] [--directory DIR]
//
// --bulk-commit-s is BulkCommitInterval (the cadence's cap), --bulk-commit-share BulkCommitShare.
// Lists build every pair of them in turn, round robin on the same store, and compare their medians
// with the last pair's. Share 1 with a cap of 10 is the fixed 10 s cadence the share replaced (for a
// build longer than 10 s); a cap of 1 s commits every second whatever the share (the cap wins).
//
// Prints one line per build (wall s, MB/s, bulk commits with their median / max ms, the cadence at the
// end, bytes the process allocated) and the medians over the builds, with /proc/loadavg before and
// after: quote figures with the load average (above 1.5: indicative). The first round is a warm-up,
// not counted.
using System.Diagnostics;
using System.Globalization;
using Indexing;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

var settings = Args(args);
if (!ByteSize.TryParse(settings.GetValueOrDefault("size", "128MiB"), out var size))
{
    Console.Error.WriteLine($"--size {settings["size"]} is not a size such as 128MiB");
    return 2;
}

var shape = Enum.Parse<DatasetShape>(settings.GetValueOrDefault("shape", "lognormal").Replace("-", ""), ignoreCase: true);
var repeat = int.Parse(settings.GetValueOrDefault("repeat", "3"));
var options = new IndexOptions
{
    BuildRamBufferSizeMB = double.Parse(settings.GetValueOrDefault("build-ram-mb", IndexOptions.DefaultBuildRamBufferSizeMB.ToString(CultureInfo.InvariantCulture)), CultureInfo.InvariantCulture),
    IndexingThreads = int.Parse(settings.GetValueOrDefault("threads", "1")),
};
var caps = Numbers(settings.GetValueOrDefault("bulk-commit-s", "2"));
var shares = Numbers(settings.GetValueOrDefault("bulk-commit-share", IndexOptions.DefaultBulkCommitShare.ToString(CultureInfo.InvariantCulture)));
var cadences = caps.SelectMany(cap => shares.Select(share => new Cadence(cap, share))).ToArray();
var root = settings.GetValueOrDefault("directory", Path.Combine(Path.GetTempPath(), "measure-bulk-build-" + Guid.NewGuid().ToString("N")));
var definition = IndexDefinition.Parse("""
    { "name": "orders-all", "collection": "orders", "fields": [
      { "name": "customer", "path": "customer.name", "type": "text" },
      { "name": "description", "path": "description", "type": "text" },
      { "name": "status", "path": "status", "type": "keyword", "sortable": true },
      { "name": "tags", "path": "tags[]", "type": "keyword" },
      { "name": "itemCount", "path": "itemCount", "type": "long", "sortable": true },
      { "name": "total", "path": "total", "type": "double", "sortable": true },
      { "name": "paid", "path": "paid", "type": "bool" }
    ] }
    """);

Console.WriteLine($"load average before: {File.ReadAllText("/proc/loadavg").Trim()}");
Console.WriteLine($"{shape} {ByteSize.Format(size)}; index options (the bulk commit cadence: each build's own): {options}");
try
{
    using var store = DocumentStore.Open(Path.Combine(root, "store"), new StoreOptions(syncWrites: false));
    store.PutMany(DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: size)).Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
    var runs = cadences.ToDictionary(cadence => cadence, _ => new List<Run>());
    for (var i = 0; i <= repeat; i++)
    {
        foreach (var cadence in cadences)
        {
            var run = await BuildAsync(store, Path.Combine(root, $"index-{i}-{cadence.CapSeconds}-{cadence.Share}"), definition,
                options with { BulkCommitInterval = TimeSpan.FromSeconds(cadence.CapSeconds), BulkCommitShare = cadence.Share });
            Console.WriteLine($"{(i == 0 ? "warm-up" : $"build {i}")}, {cadence}: {run}");
            if (i > 0)
            {
                runs[cadence].Add(run);
            }
        }
    }

    foreach (var (cadence, built) in runs)
    {
        Console.WriteLine(
            $"{cadence}, medians of {built.Count}: {Median(built.Select(r => r.Wall.TotalSeconds)):0.00} s, {Median(built.Select(r => r.MegabytesPerSecond)):0.0} MB/s, " +
            $"{Median(built.Select(r => (double)r.BulkCommits)):0} bulk commits, bulk commit {Median(built.Select(r => r.MedianCommitMs)):0} ms (median of the builds' medians; longest {built.Max(r => r.MaxCommitMs):0} ms), " +
            $"allocated {Median(built.Select(r => r.AllocatedBytes / 1e9)):0.00} GB");
    }

    if (cadences.Length > 1)
    {
        var baseline = Median(runs[cadences[^1]].Select(r => r.Wall.TotalSeconds));
        foreach (var cadence in cadences[..^1])
        {
            Console.WriteLine($"wall time, {cadence} / {cadences[^1]}: {Median(runs[cadence].Select(r => r.Wall.TotalSeconds)) / baseline:0.000}");
        }
    }
}
finally
{
    Console.WriteLine($"load average after: {File.ReadAllText("/proc/loadavg").Trim()}");
    Directory.Delete(root, recursive: true);
}

return 0;

static async Task<Run> BuildAsync(DocumentStore store, string directory, IndexDefinition definition, IndexOptions options)
{
    using var index = DocumentIndex.Open(directory, definition, options);
    await using var source = Prefetch.Start(store, definition.Collection, PrefetchStrategy.Sequential);
    var commits = new List<double>();
    using var stop = new CancellationTokenSource();
    var watch = Task.Run(async () =>
    {
        var last = index.GetStatus().Metrics;
        while (!stop.IsCancellationRequested)
        {
            await Task.Delay(2);
            var now = index.GetStatus().Metrics;
            if (now.Commits > last.Commits)
            {
                commits.Add((now.CommitTime - last.CommitTime).TotalMilliseconds / (now.Commits - last.Commits));
            }

            last = now;
        }
    });
    var allocated = GC.GetTotalAllocatedBytes();
    var started = Stopwatch.GetTimestamp();
    var metrics = await index.BuildAsync(source);
    var wall = Stopwatch.GetElapsedTime(started);
    await stop.CancelAsync();
    await watch;
    // The first commit (the build's marker, before any document) and the last (the build's end) are
    // not bulk commits.
    var bulk = commits.Count > 2 ? commits[1..^1] : [];
    return new Run(wall, metrics.Bytes / 1e6 / wall.TotalSeconds, bulk.Count, Median(bulk), bulk.Count == 0 ? 0 : bulk.Max(), index.GetStatus().BulkCommitInterval, GC.GetTotalAllocatedBytes() - allocated);
}

static double Median(IEnumerable<double> values)
{
    var sorted = values.Order().ToArray();
    return sorted.Length == 0 ? 0 : sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;
}

static double[] Numbers(string list) => [.. list.Split(',').Select(number => double.Parse(number, CultureInfo.InvariantCulture))];

static Dictionary<string, string> Args(string[] args)
{
    var settings = new Dictionary<string, string>();
    for (var i = 0; i + 1 < args.Length; i += 2)
    {
        settings[args[i].TrimStart('-')] = args[i + 1];
    }

    return settings;
}

internal sealed record Cadence(double CapSeconds, double Share)
{
    public override string ToString() => $"cap {CapSeconds} s, share {Share}";
}

internal sealed record Run(TimeSpan Wall, double MegabytesPerSecond, int BulkCommits, double MedianCommitMs, double MaxCommitMs, TimeSpan? Cadence, long AllocatedBytes)
{
    public override string ToString() =>
        $"{Wall.TotalSeconds:0.00} s, {MegabytesPerSecond:0.0} MB/s, {BulkCommits} bulk commits: median {MedianCommitMs:0} ms, max {MaxCommitMs:0} ms, " +
        $"every {Cadence?.TotalSeconds:0.0} s at the end; allocated {AllocatedBytes / 1e9:0.00} GB";
}
