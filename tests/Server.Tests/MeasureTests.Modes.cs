using System.Text.Json;
using Indexing.Datasets;
using Indexing.Measurement.Measure;
using Indexing.Server.Measure;

namespace Indexing.Server.Tests;

// --modes: a subset of the runs, e.g. reading alone against the best fixed L.
public sealed partial class MeasureTests
{
    [Fact]
    public async Task CommandLine_ModesReadOnlyAndBestFixed_MeasuresReadingAloneAgainstTheBestFixedL()
    {
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.RareGiants, 3_000_000);
        var work = Path.Combine(_root, "work");
        var results = Path.Combine(_root, "results.json");
        var timeline = Path.Combine(_root, "timeline.csv");

        var (code, output) = await InvokeAsync(
            ["measure", input, "--work", work, "--json", results, "--timeline", timeline, "--repeat", "1", "--device", "network-disk", "--modes", "bestfixed,ReadOnly"]);

        Assert.True(code == 0, output);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(results));
        var root = json.RootElement;
        Assert.Equal(["ReadOnly", "BestFixed"], root.GetProperty("results").EnumerateArray().Select(r => r.GetProperty("mode").GetString()));
        Assert.Equal("BestFixed", root.GetProperty("bound").GetString());
        Assert.True(root.GetProperty("readOnlyToBestFixed").GetDouble() > 0);
        Assert.Equal(JsonValueKind.Null, root.GetProperty("adaptiveDecisions").ValueKind);
        Assert.Equal(JsonValueKind.Array, root.GetProperty("readOnlyDecisions").ValueKind);
        Assert.All(root.GetProperty("results").EnumerateArray(), r => Assert.Equal(JsonValueKind.Null, r.GetProperty("ratioToFixedBatch").ValueKind));
        // Without an Adaptive rebuild, the timeline is the median ReadOnly run's.
        Assert.True(File.Exists(timeline));
        Assert.True(File.Exists(MeasureReport.TimelineSvgPath(timeline)));
    }

    [Fact]
    public async Task CommandLine_ModesIndexOnlyAndLuceneOnlyWithThreeThreads_ComparesTheIndexerWithLuceneAlone()
    {
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.LogNormal, 2_000_000);
        var work = Path.Combine(_root, "work");
        var results = Path.Combine(_root, "results.json");

        var (code, output) = await InvokeAsync(
            ["measure", input, "--work", work, "--json", results, "--repeat", "1", "--modes", "IndexOnly,LuceneOnly", "--indexing-threads", "3"]);

        Assert.True(code == 0, output);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(results));
        var root = json.RootElement;
        var modes = root.GetProperty("results").EnumerateArray().ToDictionary(r => r.GetProperty("mode").GetString()!);
        Assert.Equal(["IndexOnly", "LuceneOnly"], modes.Keys);
        Assert.Equal(3, root.GetProperty("settings").GetProperty("indexingThreads").GetInt32());
        Assert.Equal(
            modes["IndexOnly"].GetProperty("wallSeconds").GetDouble() / modes["LuceneOnly"].GetProperty("wallSeconds").GetDouble(),
            root.GetProperty("indexOnlyToLuceneOnly").GetDouble(), 9);
        Assert.Equal("IndexOnly", root.GetProperty("bound").GetString());
        Assert.True(modes["LuceneOnly"].GetProperty("megabytesPerSecond").GetDouble() > 0);
        // (The console's report goes to the terminal, not to System.CommandLine's output: the
        // all-modes test reads it.)
    }
}
