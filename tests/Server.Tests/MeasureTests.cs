using System.CommandLine;
using System.Globalization;
using System.IO.Compression;
using System.Text;
using System.Text.Json;
using Indexing.Datasets;
using Indexing.Measurement;
using Indexing.Prefetcher;
using Indexing.Server.Cli;
using Indexing.Server.Loading;
using Indexing.Measurement.Measure;
using Indexing.Server.Measure;

namespace Indexing.Server.Tests;

// The measure command end to end on real RocksDB and Lucene.Net: a generated file with bad lines
// in it, and real text nobody shaped for the indexer (Debian's copyright files, see
// lab/tools/make-real-text-fixture.py). Asserts what was loaded, profiled, defined and reported, never
// how fast.
public sealed partial class MeasureTests : IDisposable
{
    private readonly string _root = Path.Combine(Path.GetTempPath(), "indexing-measure-tests", Guid.NewGuid().ToString("N"));

    public MeasureTests() => Directory.CreateDirectory(_root);

    public void Dispose()
    {
        if (Directory.Exists(_root))
        {
            Directory.Delete(_root, recursive: true);
        }
    }

    [Fact]
    public async Task Measure_GeneratedFileWithBadLines_SkipsThemByLineNumberAndReportsEveryModeWithMedians()
    {
        var generated = DatasetGenerator.Generate(new DatasetSpec(DatasetShape.LogNormal, targetTotalBytes: 1_500_000, seed: 11, maxDocumentBytes: 32 << 10)).ToList();
        var lines = generated.Select(d => Encoding.UTF8.GetString(NdjsonLine(d.Id, d.Utf8Json))).ToList();
        // Bad lines at known places (1-based line numbers once inserted), each a different rule.
        var bad = new SortedDictionary<int, (string Line, string Rule)>
        {
            [2] = ("{\"id\": \"orders/bad-1\", \"doc\": {\"a\": 1,}}", "LineMalformedJson"),
            [5] = ("{\"id\": 17, \"doc\": {}}", "LineIdNotString"),
            [9] = ("{\"id\": \"orders/bad-3\"}", "LineMissingDoc"),
            [12] = ("{\"id\": \"orders/bad-4\", \"doc\": [1, 2]}", "BodyNotObject"),
            [20] = ("not json at all", "LineMalformedJson"),
            [31] = ("{\"id\": \"orders/bad-6\", \"doc\": {\"big\": \"" + new string('x', 80_000) + "\"}}", "BodyTooLarge"),
            [40] = ("{\"id\": \"orders/bad-7\", \"doc\": {\"big\": \"" + new string('x', 200_000) + "\"}}", "LineTooLong"),
        };
        foreach (var (number, (line, _)) in bad)
        {
            lines.Insert(number - 1, line);
        }

        var input = Path.Combine(_root, "orders.ndjson");
        await File.WriteAllLinesAsync(input, lines);
        var settings = Settings(input) with { Repeat = 2, TimelineFile = Path.Combine(_root, "out", "timeline.csv"), MaxDocumentBytes = 64 << 10 };

        var (code, output) = await RunAsync(settings);

        Assert.True(code == 0, output);
        foreach (var (number, (_, rule)) in bad)
        {
            Assert.Contains($"line {number} ({rule})", output, StringComparison.Ordinal);
        }

        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(settings.JsonFile));
        var root = json.RootElement;
        var loaded = root.GetProperty("input");
        Assert.Equal(lines.Count, loaded.GetProperty("lines").GetInt64());
        Assert.Equal(generated.Count, loaded.GetProperty("stored").GetInt64());
        Assert.Equal(bad.Count, loaded.GetProperty("failed").GetInt64());
        Assert.Equal(bad.Keys.Select(k => (long)k), loaded.GetProperty("errors").EnumerateArray().Select(e => e.GetProperty("line").GetInt64()));
        Assert.Equal(bad.Values.Select(v => v.Rule), loaded.GetProperty("errors").EnumerateArray().Select(e => e.GetProperty("rule").GetString()));

        // The size profile is the stored documents', in key order.
        var profile = root.GetProperty("sizeProfile");
        Assert.Equal(generated.Count, profile.GetProperty("count").GetInt64());
        Assert.Equal(generated.Sum(d => (long)d.Utf8Json.Length), profile.GetProperty("totalBytes").GetInt64());
        Assert.Equal(generated.Max(d => d.Utf8Json.Length), profile.GetProperty("maxBytes").GetInt64());
        Assert.Equal(10, profile.GetProperty("decileMeanBytes").GetArrayLength());
        Assert.Equal("orders", root.GetProperty("collection").GetString());

        // The default definition found the generator's string fields, and only string fields.
        var fields = root.GetProperty("definition").GetProperty("fields").EnumerateArray().ToList();
        var paths = fields.Select(f => f.GetProperty("path").GetString()).ToList();
        Assert.Contains("customer.name", paths);
        Assert.Contains("status", paths);
        Assert.DoesNotContain("total", paths);
        Assert.All(fields, f => Assert.Equal("text", f.GetProperty("type").GetString()));

        var results = root.GetProperty("results").EnumerateArray().ToDictionary(r => r.GetProperty("mode").GetString()!);
        Assert.Equal(["Sequential", "FixedBatch", "Adaptive", "ReadOnly", "IndexOnly", "BestFixed", "LuceneOnly"], results.Keys);
        foreach (var result in results.Values)
        {
            var runs = result.GetProperty("runs").EnumerateArray().Select(r => r.GetProperty("wallSeconds").GetDouble()).ToList();
            Assert.Equal(2, runs.Count);
            Assert.Equal(runs.Average(), result.GetProperty("wallSeconds").GetDouble(), 9); // the median of two
        }

        // The ratios, recomputed from the runs themselves.
        double MedianOfRuns(string mode) => results[mode].GetProperty("runs").EnumerateArray().Average(r => r.GetProperty("wallSeconds").GetDouble());
        var boundSeconds = Math.Max(MedianOfRuns("BestFixed"), MedianOfRuns("IndexOnly"));
        Assert.Equal(MedianOfRuns("Adaptive") / MedianOfRuns("FixedBatch"), results["Adaptive"].GetProperty("ratioToFixedBatch").GetDouble(), 9);
        Assert.Equal(MedianOfRuns("Adaptive") / boundSeconds, results["Adaptive"].GetProperty("ratioToBound").GetDouble(), 9);
        Assert.Equal(MedianOfRuns("Sequential") / boundSeconds, results["Sequential"].GetProperty("ratioToBound").GetDouble(), 9);
        Assert.Equal(MedianOfRuns("BestFixed") >= MedianOfRuns("IndexOnly") ? "BestFixed" : "IndexOnly", root.GetProperty("bound").GetString());
        Assert.Equal(JsonValueKind.Null, results["ReadOnly"].GetProperty("indexerStallPercent").ValueKind);
        // BestFixed: reading alone at the fixed L that won its sweep, which every run records.
        Assert.All(results["BestFixed"].GetProperty("runs").EnumerateArray(), r =>
        {
            var sweep = r.GetProperty("bestFixedSweep").EnumerateArray().ToList();
            Assert.Equal(64, sweep[0].GetProperty("concurrency").GetInt32());
            Assert.Contains(sweep, f => f.GetProperty("concurrency").GetInt32() == r.GetProperty("fixedConcurrency").GetInt32());
        });
        Assert.Equal(results["ReadOnly"].GetProperty("megabytesPerSecond").GetDouble() / results["BestFixed"].GetProperty("megabytesPerSecond").GetDouble(),
            root.GetProperty("readOnlyToBestFixed").GetDouble(), 9);
        Assert.Equal(JsonValueKind.Null, results["IndexOnly"].GetProperty("meanConcurrency").ValueKind);
        // LuceneOnly is no part of the bound; IndexOnly over it is the indexer's own overhead.
        Assert.False(results["LuceneOnly"].GetProperty("isBound").GetBoolean());
        Assert.Equal(MedianOfRuns("IndexOnly") / MedianOfRuns("LuceneOnly"), root.GetProperty("indexOnlyToLuceneOnly").GetDouble(), 9);
        Assert.Equal(Indexing.Indexer.IndexOptions.DefaultIndexingThreads, root.GetProperty("settings").GetProperty("indexingThreads").GetInt32());
        Assert.True(results["Adaptive"].GetProperty("peakInFlightAndBufferedBytes").GetInt64() > 0);
        Assert.True(results["Adaptive"].GetProperty("meanConcurrency").GetDouble() >= 1);
        // Cores busy: each run's processor seconds over its wall seconds, the mode's the median of two.
        foreach (var (mode, result) in results)
        {
            var cores = result.GetProperty("runs").EnumerateArray()
                .Select(r => r.GetProperty("processorSeconds").GetDouble() / r.GetProperty("wallSeconds").GetDouble()).ToList();
            Assert.All(cores, c => Assert.True(c > 0, $"{mode}: {c} cores busy"));
            Assert.Equal(cores.Average(), result.GetProperty("meanCoresBusy").GetDouble(), 6);
        }
        // Every mode that indexes counts its commits (at least the marker at the start and the last one); reading alone has none.
        foreach (var mode in new[] { "Sequential", "FixedBatch", "Adaptive", "IndexOnly" })
        {
            Assert.All(results[mode].GetProperty("runs").EnumerateArray(), r => Assert.True(r.GetProperty("commits").GetInt64() >= 2, $"{mode}: {r}"));
        }

        Assert.All(results["ReadOnly"].GetProperty("runs").EnumerateArray(), r => Assert.Equal(JsonValueKind.Null, r.GetProperty("commits").ValueKind));
        // A run of a second or two may end before the controller's first decision, so the list can be empty.
        Assert.Equal(JsonValueKind.Array, root.GetProperty("adaptiveDecisions").ValueKind);
        Assert.All(root.GetProperty("adaptiveDecisions").EnumerateArray(), d => Assert.False(string.IsNullOrEmpty(d.GetProperty("reason").GetString())));

        // The console table (its header, and a row per mode), and the timeline files.
        Assert.Contains("x FixedBatch", output, StringComparison.Ordinal);
        Assert.Contains("wall range s", output, StringComparison.Ordinal);
        foreach (var mode in results.Keys)
        {
            Assert.Matches($@"│ {mode} +│ +[0-9.]+ │", output);
        }

        Assert.Contains("Indexing alone: IndexOnly took", output, StringComparison.Ordinal);
        Assert.Contains($"{Indexing.Indexer.IndexOptions.DefaultIndexingThreads} indexing thread(s) at nice 10", output, StringComparison.Ordinal);

        var csv = await File.ReadAllLinesAsync(settings.TimelineFile!);
        Assert.StartsWith("elapsed_s,concurrency_limit,", csv[0], StringComparison.Ordinal);
        Assert.True(csv.Length >= 2, $"{csv.Length} timeline lines");
        Assert.StartsWith("<svg", await File.ReadAllTextAsync(MeasureReport.TimelineSvgPath(settings.TimelineFile!)), StringComparison.Ordinal);
        Assert.False(Directory.Exists(settings.WorkDirectory), "the work directory is removed afterwards");
    }

    [Fact]
    public async Task Measure_RealTextOfUnevenSizes_DefaultDefinitionFindsItsFieldsOnTheModelledDisk()
    {
        var input = Path.Combine(_root, "debian-copyright.ndjson");
        await using (var compressed = File.OpenRead(Path.Combine(AppContext.BaseDirectory, "Fixtures", "debian-copyright.ndjson.gz")))
        await using (var gzip = new GZipStream(compressed, CompressionMode.Decompress))
        await using (var file = File.Create(input))
        {
            await gzip.CopyToAsync(file);
        }

        var expected = File.ReadLines(input)
            .Select(line => JsonDocument.Parse(line).RootElement)
            .Where(e => e.GetProperty("id").GetString()!.StartsWith("copyright/", StringComparison.Ordinal))
            .Select(e => Encoding.UTF8.GetByteCount(e.GetProperty("doc").GetRawText()))
            .ToList();
        var disk = RebuildDevice.ModelledNetworkDisk(new NetworkDiskModelOptions { RequestLatency = TimeSpan.FromMilliseconds(1), UsefulQueueDepth = 8 });
        // An in-memory limit below the giant's size: IndexOnly indexes from chunks.
        var settings = Settings(input) with { Device = disk, Repeat = 1, InMemoryLimitBytes = 1 << 20 };

        var (code, output) = await RunAsync(settings);

        Assert.True(code == 0, output);
        Assert.Contains("measuring copyright (the largest; choose with --collection)", output, StringComparison.Ordinal);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(settings.JsonFile));
        var root = json.RootElement;
        Assert.Equal(0, root.GetProperty("input").GetProperty("failed").GetInt64());
        Assert.Equal(["copyright", "licenses"], root.GetProperty("collections").EnumerateArray().Select(c => c.GetProperty("name").GetString()));
        Assert.Equal("network-disk", root.GetProperty("settings").GetProperty("device").GetString());
        Assert.Equal(1.0, root.GetProperty("settings").GetProperty("networkDisk").GetProperty("requestLatencyMs").GetDouble());

        // Sizes: the raw JSON of each doc is what the store keeps; very uneven (the giant is hundreds of times the median).
        var profile = root.GetProperty("sizeProfile");
        Assert.Equal(expected.Count, profile.GetProperty("count").GetInt64());
        Assert.Equal(expected.Max(), profile.GetProperty("maxBytes").GetInt64());
        Assert.True(profile.GetProperty("maxBytes").GetInt64() > 100 * profile.GetProperty("p50Bytes").GetInt64(), "the fixture is uneven");

        // Nested objects in arrays, arrays of strings, and numbers left out.
        var paths = root.GetProperty("definition").GetProperty("fields").EnumerateArray().Select(f => f.GetProperty("path").GetString()).ToList();
        Assert.Contains("package", paths);
        Assert.Contains("paragraphs[]", paths);
        Assert.Contains("stanzas[].files[]", paths);
        Assert.Contains("stanzas[].license.text", paths);
        Assert.DoesNotContain("lines", paths);
        foreach (var result in root.GetProperty("results").EnumerateArray())
        {
            var run = Assert.Single(result.GetProperty("runs").EnumerateArray());
            var chunks = run.GetProperty("indexOnlyChunks");
            if (result.GetProperty("mode").GetString() is "IndexOnly" or "LuceneOnly")
            {
                Assert.True(chunks.GetInt32() > 1, $"{result.GetProperty("mode").GetString()} in {chunks} chunks");
                Assert.True(run.GetProperty("indexOnlyLoadingSeconds").GetDouble() > 0);
            }
            else
            {
                Assert.Equal(JsonValueKind.Null, chunks.ValueKind);
            }
        }
    }

    [Fact]
    public async Task Measure_DefinitionFileAndCollection_UsesThemAndRefusesAMismatch()
    {
        var input = await GeneratedFileAsync("mixed.ndjson", DatasetShape.Uniform, 400_000, extraLines: ["{\"id\": \"users/1\", \"doc\": {\"name\": \"Ann\"}}"]);
        var definition = Path.Combine(_root, "definition.json");
        await File.WriteAllTextAsync(definition, """
            { "name": "orders-status", "collection": "orders", "fields": [ { "name": "status", "path": "status", "type": "keyword" } ] }
            """);

        var (mismatch, mismatchOutput) = await RunAsync(Settings(input) with { DefinitionFile = definition, Collection = "users" });
        var (code, output) = await RunAsync(Settings(input) with { DefinitionFile = definition, Repeat = 1 });

        Assert.Equal(1, mismatch);
        Assert.Contains("--collection is 'users' but the definition", mismatchOutput, StringComparison.Ordinal);
        Assert.True(code == 0, output);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(Path.Combine(_root, "results.json")));
        Assert.Equal("orders-status", json.RootElement.GetProperty("definition").GetProperty("name").GetString());
        Assert.Equal(Path.GetFullPath(definition), json.RootElement.GetProperty("definitionSource").GetString());
    }

    [Fact]
    public async Task Measure_BadDefinition_IsRefusedBeforeLoadingAnything()
    {
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.Uniform, 100_000);
        var definition = Path.Combine(_root, "definition.json");
        await File.WriteAllTextAsync(definition, """{ "name": "Bad Name", "collection": "orders", "fields": [] }""");
        var settings = Settings(input) with { DefinitionFile = definition };

        var (code, output) = await RunAsync(settings);

        Assert.Equal(1, code);
        Assert.Contains("the index definition is refused", output, StringComparison.Ordinal);
        Assert.Contains("index name 'Bad Name'", output, StringComparison.Ordinal);
        Assert.DoesNotContain("Loading", output, StringComparison.Ordinal);
        Assert.False(Directory.Exists(settings.WorkDirectory));
        Assert.False(File.Exists(settings.JsonFile));
    }

    [Fact]
    public async Task Measure_EveryLineBad_SaysThereIsNothingToMeasure()
    {
        var input = Path.Combine(_root, "bad.ndjson");
        await File.WriteAllLinesAsync(input, ["{\"id\": \"orders/1\"}", "[]", "{\"id\": \"no collection ok\", \"doc\": 5}"]);

        var (code, output) = await RunAsync(Settings(input));

        Assert.Equal(1, code);
        Assert.Contains("no line of", output, StringComparison.Ordinal);
        Assert.Contains("3 bad lines of 3", output, StringComparison.Ordinal);
        Assert.Contains("line 2 (LineNotObject)", output, StringComparison.Ordinal);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(Path.Combine(_root, "results.json")));
        Assert.Equal([1L, 2L, 3L], json.RootElement.GetProperty("input").GetProperty("errors").EnumerateArray().Select(e => e.GetProperty("line").GetInt64()));
    }

    [Fact]
    public async Task Measure_AwkwardIdsNamesAndEncoding_AreHandledNotFatal()
    {
        // A byte order mark, a collection name with brackets (console markup), a dotted property
        // name (unspellable as a path), an escaped lone surrogate in an id, and a repeated id.
        var lines = new[]
        {
            "{\"id\": \"x[1]/a\", \"doc\": {\"title\": \"first\", \"x.y\": \"dotted\"}}",
            "{\"id\": \"x[1]/\\ud800\", \"doc\": {\"title\": \"bad\"}}",
            "{\"id\": \"x[1]/b\", \"doc\": {\"title\": \"second\"}}",
            "{\"id\": \"x[1]/a\", \"doc\": {\"title\": \"first again\", \"x.y\": \"dotted\"}}",
        };
        var input = Path.Combine(_root, "awkward.ndjson");
        await File.WriteAllBytesAsync(input, [.. "\uFEFF"u8.ToArray(), .. Encoding.UTF8.GetBytes(string.Join('\n', lines))]);

        var (code, output) = await RunAsync(Settings(input));

        Assert.True(code == 0, output);
        Assert.Contains("line 2 (LineInvalidUnicode)", output, StringComparison.Ordinal);
        Assert.Contains("1 line had the id of an earlier line", output, StringComparison.Ordinal);
        Assert.Contains("properties whose names a path cannot spell ('.', '[', ']'", output, StringComparison.Ordinal);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(Path.Combine(_root, "results.json")));
        var root = json.RootElement;
        Assert.Equal(3, root.GetProperty("input").GetProperty("stored").GetInt64());
        Assert.Equal(1, root.GetProperty("replacedDocuments").GetInt64());
        Assert.Equal("x[1]", root.GetProperty("collection").GetString());
        Assert.Equal(2, root.GetProperty("sizeProfile").GetProperty("count").GetInt64());
        Assert.Equal(["title"], root.GetProperty("definition").GetProperty("fields").EnumerateArray().Select(f => f.GetProperty("path").GetString()));
    }

    [Theory]
    [InlineData("", "has no records (0 lines")]
    [InlineData("\n  \n\n", "has no records (3 lines")]
    [InlineData("{\"id\": \"settings\", \"doc\": {\"a\": \"b\"}}", "none of the 1 documents loaded belongs to a collection")]
    public async Task Measure_NothingToMeasure_SaysWhyAndStillWritesTheLoadReport(string content, string expected)
    {
        var input = Path.Combine(_root, "nothing.ndjson");
        await File.WriteAllTextAsync(input, content);

        var (code, output) = await RunAsync(Settings(input));

        Assert.Equal(1, code);
        Assert.Contains(expected, output, StringComparison.Ordinal);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(Path.Combine(_root, "results.json")));
        Assert.Contains(expected, json.RootElement.GetProperty("error").GetString(), StringComparison.Ordinal);
        Assert.Equal(JsonValueKind.Null, json.RootElement.GetProperty("results").ValueKind);
        Assert.False(Directory.Exists(Path.Combine(_root, "work")));
    }

    [Fact]
    public async Task Measure_DefinitionForACollectionNotInTheFile_NamesTheCollectionsThereAre()
    {
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.Uniform, 50_000);
        var definition = Path.Combine(_root, "users.json");
        await File.WriteAllTextAsync(definition, """{ "name": "users", "collection": "users", "fields": [ { "name": "n", "path": "name", "type": "text" } ] }""");

        var (code, output) = await RunAsync(Settings(input) with { DefinitionFile = definition });

        Assert.Equal(1, code);
        Assert.Contains("collection 'users' has no document in", output, StringComparison.Ordinal);
        Assert.Contains("it has 'orders' (", output, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--disk-latency-ms 5", "--disk-latency-ms describes the modelled network disk, but --device is local")]
    [InlineData("--device network-disk --disk-queue-depth 0", "--disk-queue-depth is 0; it must be from 1 to 4096")]
    [InlineData("--device network-disk --disk-stream-mbps -3", "--disk-stream-mbps is -3; it must be a positive number")]
    [InlineData("--timeline plot.svg", "--timeline plot.svg ends in .svg")]
    [InlineData("--repeat 0", "--repeat is 0; it must be from 1 to 100")]
    [InlineData("--max-document-size 12parsecs", "--max-document-size '12parsecs' is not a size from 1 KiB to 1 GiB")]
    [InlineData("--device tape", "tape")]
    [InlineData("--modes ReadOnly,Fastest", "--modes names 'Fastest', which is not a mode; use Sequential, FixedBatch, Adaptive, ReadOnly, IndexOnly, BestFixed, LuceneOnly.")]
    [InlineData("--indexing-threads 0", "--indexing-threads is 0; it must be from 1 to 16")]
    [InlineData("--indexing-threads 17", "--indexing-threads is 17; it must be from 1 to 16")]
    public async Task CommandLine_BadOptions_AreRefusedNamingTheOptionAndRule(string options, string expected)
    {
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.Uniform, 10_000);

        var work = Path.Combine(_root, "work");
        var results = Path.Combine(_root, "results.json");

        var (code, output) = await InvokeAsync(["measure", input, "--work", work, "--json", results, .. options.Split(' ')]);

        Assert.NotEqual(0, code);
        Assert.Contains(expected, output, StringComparison.Ordinal);
        Assert.False(Directory.Exists(work), "refused before any work");
        Assert.False(File.Exists(results));
    }

    [Fact]
    public async Task CommandLine_MissingFileAndHelp_AreClear()
    {
        var (missing, missingOutput) = await InvokeAsync(["measure", Path.Combine(_root, "nope.ndjson")]);
        var (help, helpOutput) = await InvokeAsync(["measure", "--help"]);

        Assert.NotEqual(0, missing);
        Assert.Contains("nope.ndjson", missingOutput, StringComparison.Ordinal);
        Assert.Equal(0, help);
        foreach (var option in new[] { "--definition", "--collection", "--device", "--disk-latency-ms", "--modes", "--repeat", "--json", "--timeline", "--work", "--keep-store" })
        {
            Assert.Contains(option, helpOutput, StringComparison.Ordinal);
        }
    }

    private MeasureSettings Settings(string input) => new(
        input,
        DefinitionFile: null,
        Collection: null,
        RebuildDevice.Local,
        Repeat: 1,
        JsonFile: Path.Combine(_root, "results.json"),
        TimelineFile: null,
        WorkDirectory: Path.Combine(_root, "work"),
        KeepStore: false,
        MaxDocumentBytes: 64 << 20,
        InMemoryLimitBytes: 1L << 30);

    private async Task<string> GeneratedFileAsync(string name, DatasetShape shape, long bytes, IEnumerable<string>? extraLines = null, int seed = DatasetSpec.DefaultSeed)
    {
        var path = Path.Combine(_root, name);
        await using (var file = File.Create(path))
        using (var writer = new NdjsonBulkWriter(file))
        {
            writer.WriteAll(DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: bytes, seed: seed)));
        }

        if (extraLines is not null)
        {
            await File.AppendAllLinesAsync(path, extraLines);
        }

        return path;
    }

    private static byte[] NdjsonLine(string id, byte[] body)
    {
        using var memory = new MemoryStream();
        using (var writer = new NdjsonBulkWriter(memory, leaveOpen: true))
        {
            writer.Write(id, body);
        }

        return memory.ToArray().AsSpan().TrimEnd((byte)'\n').ToArray();
    }

    private static async Task<(int Code, string Output)> RunAsync(MeasureSettings settings)
    {
        var recording = new RecordingConsole();
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(5));
        var code = await new MeasureRunner(settings, MeasureFileLoader.LoadAsync, recording.Console).RunAsync(timeout.Token);
        return (code, recording.Output);
    }

    private static async Task<(int Code, string Output)> InvokeAsync(string[] args)
    {
        var output = new StringWriter(CultureInfo.InvariantCulture);
        var code = await CommandLine.Build().Parse(args).InvokeAsync(new InvocationConfiguration { Output = output, Error = output });
        return (code, output.ToString());
    }
}
