using System.Text.Json;
using System.Xml.Linq;
using Indexing.Datasets;
using Indexing.Lab.Soak;
using Indexing.Server.Tests;
using Indexing.Storage;

namespace Indexing.Lab.Tests.Soak;

// The scale run end to end at a size a test can afford: load, initial build, side-by-side rebuild
// under live traffic, the after window, and the four files with every sampled figure.
public sealed class SoakTests : IDisposable
{
    private readonly TempDirectory _directory = new("indexing-soak-tests");

    public void Dispose() => _directory.Dispose();

    [Fact]
    public async Task Soak_SmallDataset_WritesOneCsvRowPerSecondWithEveryFigureThePlotAndTheReport()
    {
        var output = Path.Combine(_directory.Path, "results");
        var settings = new SoakSettings(
            Path.Combine(_directory.Path, "data"), DatasetShape.LogNormal, SizeBytes: 2 << 20, Seed: 7, Writers: 1, Port: 0, DirectReads: false,
            After: TimeSpan.FromSeconds(2), output, "test", ["--Storage:SyncWrites=false", "--Storage:RowCacheBytes=4MiB"]);
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));
        var recording = new RecordingConsole();

        var code = await new SoakRunner(settings, recording.Console).RunAsync(timeout.Token);

        Assert.True(code == 0, recording.Output);
        Assert.DoesNotContain("a sample failed", recording.Output, StringComparison.Ordinal);
        Assert.Contains("Side-by-side rebuild of orders: Done", recording.Output, StringComparison.Ordinal);
        var csv = File.ReadAllLines(Path.Combine(output, "scale-test.csv"));
        var header = csv[0].Split(',');
        Assert.Equal(23, header.Length);
        Assert.Contains("private_bytes", header);
        Assert.Contains("mapped_file_bytes", header);
        Assert.Contains("lucene_ram_buffer_bytes", header);
        Assert.Contains("block_cache_pinned_bytes", header);
        Assert.Contains("table_readers_bytes", header);
        var rows = csv.Skip(1).Select(line => line.Split(',')).ToList();
        Assert.All(rows, row => Assert.Equal(header.Length, row.Length));
        var phases = rows.Select(row => row[Array.IndexOf(header, "phase")]).Distinct().ToList();
        // Samples every second, the phases in the run's order: the load and the first build (2 MB: each
        // may take under a second, so neither need have a sample), the 5 s idle window before the
        // rebuild, the rebuild's own phases (as short), and the 2 s after it.
        string[] order = ["load", "initial build", "before", "bulk", "catch-up", "swap", "verify", "after"];
        var positions = phases.Select(p => Array.IndexOf(order, p)).ToList();
        Assert.True(positions.All(p => p >= 0) && positions.SequenceEqual(positions.Order()), string.Join(", ", phases));
        Assert.Contains("before", phases);
        Assert.Equal("after", phases[^1]);
        Assert.True(rows.Count >= 8, string.Join('\n', csv));
        Assert.All(rows, row => Assert.True(long.Parse(row[Array.IndexOf(header, "rss_bytes")]) > 10 << 20));
        Assert.All(rows, row => Assert.Equal(
            long.Parse(row[Array.IndexOf(header, "rss_bytes")]),
            long.Parse(row[Array.IndexOf(header, "private_bytes")]) + long.Parse(row[Array.IndexOf(header, "mapped_file_bytes")])));

        var svg = XDocument.Load(Path.Combine(output, "scale-test.svg"));
        XNamespace ns = "http://www.w3.org/2000/svg";
        Assert.Equal(19, svg.Descendants(ns + "polyline").Count());
        Assert.Contains(svg.Descendants(ns + "text"), t => t.Value == "after");

        using var json = JsonDocument.Parse(File.ReadAllText(Path.Combine(output, "scale-test.json")));
        var root = json.RootElement;
        Assert.True(root.GetProperty("rebuild").GetProperty("consistent").GetBoolean());
        Assert.Equal(4L << 20, root.GetProperty("bound").GetProperty("rowCacheBytes").GetInt64());
        var memory = root.GetProperty("memory");
        Assert.InRange(memory.GetProperty("peakPrivateBytes").GetInt64(), 1, memory.GetProperty("peakResidentBytes").GetInt64());
        Assert.True(memory.GetProperty("peakMappedFileBytes").GetInt64() > 0);
        Assert.Equal(["before", "during", "after"], root.GetProperty("caches").EnumerateArray().Select(c => c.GetProperty("phase").GetString()));
        Assert.Contains("glibc malloc", root.GetProperty("malloc").GetString(), StringComparison.Ordinal);

        var markdown = File.ReadAllText(Path.Combine(output, "scale-test.md"));
        Assert.StartsWith("### test", markdown, StringComparison.Ordinal);
        Assert.Contains("| peak private memory / bound |", markdown, StringComparison.Ordinal);
        Assert.Contains("| RSS growth over the second half |", markdown, StringComparison.Ordinal);
        Assert.Contains("| private memory growth over the second half |", markdown, StringComparison.Ordinal);
        Assert.Contains("Load average (1 min)", markdown, StringComparison.Ordinal);
        Assert.Contains("RowCacheBytes=4 MiB", markdown, StringComparison.Ordinal);

        // The live writers left the dataset alone (their documents are beside it), so the next run
        // rebuilds the same bytes: every loaded document is still there at its loaded size.
        var dataset = root.GetProperty("dataset");
        var loaded = dataset.GetProperty("documents").GetInt64();
        using var store = DocumentStore.Open(Path.Combine(settings.DataDirectory, "store"));
        var datasetIds = store.ScanMetadata(dataset.GetProperty("collection").GetString())
            .Where(m => long.Parse(m.Id[(m.Id.IndexOf('/', StringComparison.Ordinal) + 1)..], System.Globalization.CultureInfo.InvariantCulture) <= loaded)
            .ToList();
        Assert.Equal(loaded, datasetIds.Count);
        Assert.Equal(dataset.GetProperty("bytes").GetInt64(), datasetIds.Sum(m => m.SizeBytes));
        Assert.True(root.GetProperty("rebuild").GetProperty("writes").GetInt64() > 0);
    }
}
