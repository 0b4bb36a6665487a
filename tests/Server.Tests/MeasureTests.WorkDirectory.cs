using System.Text.Json;
using Indexing.Datasets;
using Indexing.Measurement.Measure;
using Indexing.Server.Measure;

namespace Indexing.Server.Tests;

// The work directory: only measure's own is used, kept on request, and never shared or written into.
public sealed partial class MeasureTests
{
    [Fact]
    public async Task Measure_WorkDirectoryNotItsOwn_IsLeftAlone()
    {
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.Uniform, 100_000);
        var settings = Settings(input);
        Directory.CreateDirectory(settings.WorkDirectory);
        var precious = Path.Combine(settings.WorkDirectory, "precious.txt");
        await File.WriteAllTextAsync(precious, "keep me");

        var (code, output) = await RunAsync(settings);

        Assert.Equal(1, code);
        Assert.Contains("was not made by measure", output, StringComparison.Ordinal);
        Assert.Equal("keep me", await File.ReadAllTextAsync(precious));
    }

    [Fact]
    public async Task Measure_KeepStore_LeavesTheLoadedStoreAndARerunStartsFreshWithoutTouchingOtherFiles()
    {
        var big = await GeneratedFileAsync("big.ndjson", DatasetShape.Uniform, 200_000);
        var small = await GeneratedFileAsync("small.ndjson", DatasetShape.Uniform, 40_000, seed: 5);
        var settings = Settings(big) with { KeepStore = true, Repeat = 1 };

        var (first, firstOutput) = await RunAsync(settings);
        var notes = Path.Combine(settings.WorkDirectory, "notes.txt");
        await File.WriteAllTextAsync(notes, "mine");
        var (second, secondOutput) = await RunAsync(settings with { InputFile = small, KeepStore = false });

        Assert.True(first == 0, firstOutput);
        Assert.Contains("The loaded store is kept in", firstOutput, StringComparison.Ordinal);
        Assert.True(second == 0, secondOutput);
        using var json = JsonDocument.Parse(await File.ReadAllBytesAsync(settings.JsonFile));
        // A fresh store: only the small file's documents, none left from the first run.
        Assert.Equal(json.RootElement.GetProperty("input").GetProperty("stored").GetInt64(), json.RootElement.GetProperty("sizeProfile").GetProperty("count").GetInt64());
        Assert.Equal(0, json.RootElement.GetProperty("replacedDocuments").GetInt64());
        Assert.True(File.ReadLines(small).Count() < File.ReadLines(big).Count());
        // Only what measure made is deleted: the user's file and the directory stay.
        Assert.Equal("mine", await File.ReadAllTextAsync(notes));
        Assert.Equal(["notes.txt"], Directory.GetFileSystemEntries(settings.WorkDirectory).Select(Path.GetFileName));
    }

    [Theory]
    [InlineData("json")]
    [InlineData("timeline")]
    [InlineData("input")]
    public async Task Measure_AFileInsideTheWorkDirectory_IsRefusedBeforeAnything(string which)
    {
        var work = Path.Combine(_root, "work");
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.Uniform, 50_000);
        if (which == "input")
        {
            Directory.CreateDirectory(work);
            File.Move(input, Path.Combine(work, "orders.ndjson"));
            input = Path.Combine(work, "orders.ndjson");
        }

        var settings = which switch
        {
            "json" => Settings(input) with { JsonFile = Path.Combine(work, "results.json") },
            "timeline" => Settings(input) with { TimelineFile = Path.Combine(work, "sub", "t.csv") },
            _ => Settings(input),
        };

        var (code, output) = await RunAsync(settings);

        Assert.Equal(1, code);
        Assert.Contains("is inside the work directory", output, StringComparison.Ordinal);
        Assert.True(File.Exists(input), "the input is untouched");
        Assert.DoesNotContain("Loading", output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Measure_WorkDirectoryInUseByAnotherRun_IsRefusedAndLeftAlone()
    {
        var input = await GeneratedFileAsync("orders.ndjson", DatasetShape.Uniform, 50_000);
        var settings = Settings(input);
        Directory.CreateDirectory(Path.Combine(settings.WorkDirectory, "store"));
        var marker = Path.Combine(settings.WorkDirectory, MeasureWorkDirectory.MarkerName);
        string output;
        int code;
        using (new FileStream(marker, FileMode.Create, FileAccess.ReadWrite, FileShare.None))
        {
            (code, output) = await RunAsync(settings);
        }

        Assert.Equal(1, code);
        Assert.Contains("is in use by another measure run", output, StringComparison.Ordinal);
        Assert.True(Directory.Exists(Path.Combine(settings.WorkDirectory, "store")), "the other run's store is untouched");
    }
}
