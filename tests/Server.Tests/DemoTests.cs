using Indexing.Datasets;
using Indexing.Measurement;
using Indexing.Prefetcher;
using Indexing.Server.Demo;
using Indexing.Storage;

namespace Indexing.Server.Tests;

// The main job end to end on a small dataset: the server starts, the dataset is generated and
// loaded, prefetched, the index built and rebuilt side by side under live traffic, verified.
public sealed class DemoTests : IDisposable
{
    private readonly string _directory = Path.Combine(Path.GetTempPath(), "indexing-demo-tests", Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    [Fact]
    public void StatusTables_BlobThreshold_IsTheStores()
    {
        // The demo's store table restates the store's blob threshold (the server reads only the engine's public API).
        Assert.Equal(DocumentStore.MinBlobBytes, StatusTables.MinBlobBytes);
    }

    [Fact]
    public async Task Demo_SmallDataset_RebuildsUnderTrafficAndVerifies_ThenReusesTheData()
    {
        var settings = new DemoSettings(_directory, DatasetShape.LogNormal, SizeBytes: 3 << 20, Seed: 7, PrefetchPass.AdaptiveStrategy,
            DirectReads: false, PrefetchDisk: RebuildDevice.DefaultNetworkDisk, Rebuild: true, Writers: 1, Port: 0, ExitWhenDone: true);
        using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(3));

        var (first, firstOutput) = await RunAsync(settings, timeout.Token);
        // The second run rebuilds with one indexing thread (--indexing-threads 1), the first with the default.
        var (second, secondOutput) = await RunAsync(settings with { PrefetchDisk = null, IndexingThreads = 1 }, timeout.Token);

        Assert.True(first == 0, firstOutput);
        Assert.Contains("Generating and loading", firstOutput, StringComparison.Ordinal);
        Assert.Contains("Side-by-side rebuild of orders: Done", firstOutput, StringComparison.Ordinal);
        Assert.Contains("consistent:", firstOutput, StringComparison.Ordinal);
        Assert.Contains("/admin", firstOutput, StringComparison.Ordinal);
        Assert.True(second == 0, secondOutput);
        Assert.Contains("Dataset present", secondOutput, StringComparison.Ordinal);
        Assert.DoesNotContain("Generating and loading", secondOutput, StringComparison.Ordinal);
        Assert.True(File.Exists(Path.Combine(_directory, "dataset.json")));
        Assert.True(File.Exists(Path.Combine(_directory, "indexes", "catalog.json")));
    }

    [Fact]
    public async Task Demo_StoppedWhileTheServerStarts_Returns130AndClosesTheStore()
    {
        var settings = new DemoSettings(_directory, DatasetShape.LogNormal, SizeBytes: 1 << 20, Seed: 7, PrefetchPass.AdaptiveStrategy,
            DirectReads: false, PrefetchDisk: null, Rebuild: true, Writers: 1, Port: 0, ExitWhenDone: true);
        using var stopped = new CancellationTokenSource();
        await stopped.CancelAsync();

        var (code, output) = await RunAsync(settings, stopped.Token);

        Assert.True(code == 130, output);
        Assert.Contains("cancelled", output, StringComparison.Ordinal);
        Assert.DoesNotContain("Generating and loading", output, StringComparison.Ordinal);
        // The host closed what it had opened: the store's lock is free again.
        using var store = DocumentStore.Open(Path.Combine(_directory, "store"));
        Assert.Empty(store.ScanMetadata());
    }

    private static async Task<(int ExitCode, string Output)> RunAsync(DemoSettings settings, CancellationToken cancellationToken)
    {
        var recording = new RecordingConsole();
        var code = await new DemoRunner(settings, recording.Console).RunAsync(cancellationToken);
        return (code, recording.Output);
    }

    [Theory]
    [InlineData("--model-network-disk false --disk-stream-mbps 3", "--disk-stream-mbps describes the modelled network disk, but --model-network-disk is false; drop one of them.")]
    [InlineData("--disk-queue-depth 0", "--disk-queue-depth is 0; it must be from 1 to 4096.")]
    [InlineData("--disk-stream-mbps 0", "--disk-stream-mbps is 0; it must be a positive number.")]
    [InlineData("--indexing-threads 0", "--indexing-threads is 0; it must be from 1 to 16.")]
    public void CommandLine_BadDiskOptions_AreRefusedNamingTheOptionAndRule(string options, string expected)
    {
        var parse = Cli.CommandLine.Build().Parse(["demo", "--data", _directory, .. options.Split(' ')]);

        Assert.Contains(parse.Errors, e => e.Message == expected);
        Assert.False(Directory.Exists(_directory));
    }
}
