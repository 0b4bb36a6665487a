#:project ../../src/Measurement/Indexing.Measurement.csproj
#:project ../../src/Datasets/Indexing.Datasets.csproj
#:property TreatWarningsAsErrors=false
#:property PublishAot=false
#:property ServerGarbageCollector=false

// Four indexes over one collection, built three ways (issue 53): at once through one shared pass,
// one after another, and as four independent prefetches, on the local disk or a modelled one.
// Prints, per run, the bytes the prefetches read from the store, the process's read_bytes, the wall
// time, the peak RSS and the indexer's stall, and first one index built alone (the baseline of the
// "at most 1.2x one build" line). The store is loaded once; each run opens it anew with direct
// reads (no page cache), so every run reads cold.
//
//   dotnet run lab/tools/many-indexes.cs -- [--corpus orders|FILE.ndjson] [--size 256MB] [--shape lognormal]
//       [--device local|network-disk|slow-disk|capped-disk] [--ways shared,sequential,independent]
//       [--repeat 1] [--directory DIR]
//
// --corpus orders generates the demo's orders (--size of them, the demo's lognormal sizes or another
// --shape: rare-giants makes the read-bound corpus, giants that are cheap to index); a file is bulk
// NDJSON ({"id": ..., "doc": {...}} per line, e.g. lab/tools/make-real-text-fixture.py's real text),
// indexed by four small definitions over its collection's fields (--fields path:type,... four pairs).
// Quote the load average printed before and after.
using System.Globalization;
using System.Text;
using System.Text.Json;
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

var corpus = settings.GetValueOrDefault("corpus", "orders");
var size = ParseSize(settings.GetValueOrDefault("size", "256MB"));
var shape = Enum.Parse<DatasetShape>(settings.GetValueOrDefault("shape", "lognormal").Replace("-", string.Empty), ignoreCase: true);
var repeat = int.Parse(settings.GetValueOrDefault("repeat", "1"), CultureInfo.InvariantCulture);
var ways = settings.GetValueOrDefault("ways", "shared,sequential,independent").Split(',').Select(ParseWay).ToList();
var device = RebuildDevice.Named(settings.GetValueOrDefault("device", "local"));

var root = Path.Combine(settings.GetValueOrDefault("directory", Path.GetTempPath()), $"many-indexes-{Guid.NewGuid():N}");
var data = Path.Combine(root, "data");
try
{
    Console.WriteLine($"load average before: {File.ReadAllText("/proc/loadavg").Trim()}");
    string collection;
    IReadOnlyList<string> definitions;
    await using (var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = data }))
    {
        if (corpus == "orders")
        {
            collection = DatasetSpec.DefaultCollection;
            foreach (var chunk in DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: size)).Chunk(1000))
            {
                engine.PutMany(chunk.Select(d => new DocumentWrite(d.Id, d.Utf8Json)));
            }

            definitions = ManyIndexesRun.OrdersDefinitions(collection);
        }
        else
        {
            collection = LoadNdjson(engine, corpus);
            var fields = settings.GetValueOrDefault("fields", "package:keyword,bytes:long,lines:long,format:keyword,upstream.name:text,package:keyword,bytes:long,lines:long")
                .Split(',').Select(f => f.Split(':')).Select(f => (Name: f[0].Replace('.', '_').Replace("[]", string.Empty), Path: f[0], Type: f[1])).ToList();
            definitions = [.. Enumerable.Range(0, 4).Select(i => ManyIndexesRun.Definition($"text-{i + 1}", collection, fields[2 * i], fields[(2 * i) + 1]))];
        }
    }

    var store = Path.Combine(data, "store");
    if (!await ManyIndexesRun.SettleAsync(store, TimeSpan.FromMinutes(5)))
    {
        Console.Error.WriteLine("RocksDB still compacting after 5 minutes; the runs would share the disk with it.");
        return 1;
    }

    Console.WriteLine($"corpus {corpus}{(corpus == "orders" ? $" ({shape}, {size:N0} bytes)" : string.Empty)}, collection {collection}, device {device.Name}");
    var alone = await ManyIndexesRun.RunAsync(store, [definitions[0]], ManyIndexesWay.SharedPass, device, root);
    Console.WriteLine($"one index alone: {alone}");
    var rows = new List<ManyIndexesFigures>();
    for (var round = 0; round < repeat; round++)
    {
        foreach (var way in ways)
        {
            var figures = await ManyIndexesRun.RunAsync(store, definitions, way, device, root);
            rows.Add(figures);
            Console.WriteLine(figures);
        }
    }

    Console.WriteLine($"load average after: {File.ReadAllText("/proc/loadavg").Trim()}");
    Console.WriteLine();
    Console.WriteLine("| way | device | read from the store (x one alone) | process read_bytes | wall s (x independent) | peak RSS | stall s |");
    Console.WriteLine("|---|---|---:|---:|---:|---:|---:|");
    foreach (var group in rows.GroupBy(r => r.Way))
    {
        var read = MeasureResults.Median(group.Select(r => (double)r.BytesReadFromStore));
        var io = MeasureResults.Median(group.Select(r => (double)(r.ProcessReadBytes ?? 0)));
        var wall = MeasureResults.Median(group.Select(r => r.Wall.TotalSeconds));
        var independent = rows.Where(r => r.Way == ManyIndexesWay.Independent).Select(r => r.Wall.TotalSeconds).DefaultIfEmpty(double.NaN);
        var rss = MeasureResults.Median(group.Select(r => (double)(r.PeakRssBytes ?? 0)));
        var stall = MeasureResults.Median(group.Select(r => r.Stall.TotalSeconds));
        Console.WriteLine(FormattableString.Invariant(
            $"| {group.Key} | {device.Name} | {read / 1048576:N0} MiB ({read / alone.BytesReadFromStore:0.00}x) | {io / 1048576:N0} MiB | {wall:0.0} ({wall / MeasureResults.Median(independent):0.00}x) | {rss / 1048576:N0} MiB | {stall:0.0} |"));
    }

    Console.WriteLine(FormattableString.Invariant(
        $"one index alone: its prefetch read {alone.BytesReadFromStore / 1048576.0:N0} MiB of documents; the process read {(alone.ProcessReadBytes ?? 0) / 1048576.0:N0} MiB from disk, {(double)(alone.ProcessReadBytes ?? 0) / alone.StoreBytesOnDisk:0.00}x the store's {alone.StoreBytesOnDisk / 1048576.0:N0} MiB on disk"));
    return 0;
}
finally
{
    Directory.Delete(root, recursive: true);
}

static ManyIndexesWay ParseWay(string name) => name switch
{
    "shared" => ManyIndexesWay.SharedPass,
    "sequential" => ManyIndexesWay.OneAfterAnother,
    "independent" => ManyIndexesWay.Independent,
    _ => throw new ArgumentException($"--ways {name}: use shared, sequential or independent"),
};

static long ParseSize(string text)
{
    var units = new[] { ("GB", 1_000_000_000L), ("MB", 1_000_000L), ("KB", 1_000L) };
    foreach (var (suffix, factor) in units)
    {
        if (text.EndsWith(suffix, StringComparison.OrdinalIgnoreCase))
        {
            return (long)(double.Parse(text[..^suffix.Length], CultureInfo.InvariantCulture) * factor);
        }
    }

    return long.Parse(text, CultureInfo.InvariantCulture);
}

// Bulk NDJSON into the store; returns the collection of the first id.
static string LoadNdjson(IndexingEngine engine, string path)
{
    string? collection = null;
    var batch = new List<DocumentWrite>();
    foreach (var line in File.ReadLines(path))
    {
        if (string.IsNullOrWhiteSpace(line))
        {
            continue;
        }

        using var json = JsonDocument.Parse(line);
        var id = json.RootElement.GetProperty("id").GetString()!;
        collection ??= id[..id.IndexOf('/', StringComparison.Ordinal)];
        batch.Add(new DocumentWrite(id, Encoding.UTF8.GetBytes(json.RootElement.GetProperty("doc").GetRawText())));
        if (batch.Count == 1000)
        {
            engine.PutMany(batch);
            batch.Clear();
        }
    }

    engine.PutMany(batch);
    return collection ?? throw new InvalidDataException($"{path} holds no document");
}
