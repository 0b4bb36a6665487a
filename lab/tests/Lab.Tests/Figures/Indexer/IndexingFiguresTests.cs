using System.Globalization;
using System.Runtime;

using Indexing.Datasets;
using Indexing.Indexer.Tests.Index;
using Indexing.Prefetcher;

using Xunit.Abstractions;

namespace Indexing.Indexer.Tests.Figures;

[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class TimingSensitive
{
    public const string Name = "Indexer timing-sensitive";
}

/// <summary>
/// The IndexOnly bound: one IndexWriter building an index from documents already in memory (input
/// costs nothing), per size shape, with 1 and 2 indexing threads and several RAM buffer sizes:
/// docs/s, MB/s, stall, time in Lucene and in commits; the figures go to the test output. By default
/// each shape is about 4 MB with the default options only, so the suite stays fast; set
/// INDEXER_FIGURES_MB (e.g. 200) for the whole grid and figures worth quoting. It asserts what was
/// indexed only: speed belongs in written results, not in timed tests.
/// </summary>
[Collection(TimingSensitive.Name)]
public sealed class IndexingFiguresTests(ITestOutputHelper output)
{
    private const long DefaultBytesPerShape = 4_000_000;

    private static readonly int? _requestedMegabytes =
        int.TryParse(Environment.GetEnvironmentVariable("INDEXER_FIGURES_MB"), out var megabytes) && megabytes > 0 ? megabytes : null;

    [Fact]
    public async Task Measure_EachShapeThreadsAndRamBuffer_ReportsThroughputAndWhereTheTimeWent()
    {
        var bytesPerShape = _requestedMegabytes is { } mb ? mb * 1_000_000L : DefaultBytesPerShape;
        var repeats = int.TryParse(Environment.GetEnvironmentVariable("INDEXER_FIGURES_REPEATS"), out var r) && r > 0 ? r : 1;
        (int Threads, double RamMB)[] grid = _requestedMegabytes is null
            ? [(IndexOptions.DefaultIndexingThreads, IndexOptions.DefaultBuildRamBufferSizeMB)]
            : [(1, 16), (1, 64), (1, 256), (2, 16), (2, 64), (2, 256)];
        output.WriteLine($"machine: {Environment.ProcessorCount} cores, server GC {GCSettings.IsServerGC}, concurrent GC {GCSettings.LatencyMode}; .NET {Environment.Version}");
        output.WriteLine($"definition: {IndexTestEnvironment.Orders}; about {bytesPerShape / 1e6:0} MB per shape; median of {repeats} (configurations interleaved per repeat)");
        await WarmUpAsync();
        output.WriteLine("shape | threads | RAM MB | docs | MB | docs/s | MB/s | MB per CPU-s | stall | Lucene (thread-s) | commit time | gen2 GCs");
        foreach (var shape in Enum.GetValues<DatasetShape>())
        {
            var documents = DatasetGenerator.Generate(new DatasetSpec(shape, targetTotalBytes: bytesPerShape, seed: 7)).ToList();
            var etag = 0L;
            var prefetched = documents.Select(d => new PrefetchedDocument(d.Id, ++etag, d.Utf8Json)).ToList();
            var runs = grid.Select(_ => new List<Run>()).ToArray();
            for (var repeat = 0; repeat < repeats; repeat++)
            {
                for (var i = 0; i < grid.Length; i++)
                {
                    runs[i].Add(await MeasureAsync(prefetched, etag, grid[i].Threads, grid[i].RamMB));
                }
            }

            for (var i = 0; i < grid.Length; i++)
            {
                var median = runs[i].OrderBy(x => x.Metrics.MegabytesPerSecond).ElementAt(runs[i].Count / 2);
                var metrics = median.Metrics;
                output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"{shape.ToName()} | {grid[i].Threads} | {grid[i].RamMB} | {metrics.Documents} | {metrics.Bytes / 1e6:0.0} | {metrics.DocumentsPerSecond:0} | {metrics.MegabytesPerSecond:0.0} | " +
                    $"{metrics.Bytes / 1e6 / median.CpuTime.TotalSeconds:0.0} | {metrics.StallFraction:P1} | {metrics.LuceneTime.TotalSeconds:0.00} | {metrics.CommitTime.TotalSeconds:0.00} s | {median.Gen2Collections}"));
                foreach (var run in runs[i])
                {
                    Assert.Equal(documents.Count, run.Metrics.Documents);
                    Assert.Equal(documents.Sum(d => d.SizeBytes), run.Metrics.Bytes);
                    Assert.Equal(documents.Count, run.IndexedCount);
                }
            }
        }
    }

    private static async Task<Run> MeasureAsync(List<PrefetchedDocument> documents, long snapshotEtag, int threads, double ramMB)
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(options: new IndexOptions { IndexingThreads = threads, RamBufferSizeMB = ramMB, BuildRamBufferSizeMB = ramMB });
        GC.Collect();
        GC.WaitForPendingFinalizers();
        var gen2 = GC.CollectionCount(2);
        var cpu = System.Diagnostics.Process.GetCurrentProcess().TotalProcessorTime;
        var metrics = await index.BuildAsync(new MemoryBatchSource(documents, snapshotEtag)).WaitAsync(TimeSpan.FromMinutes(10));
        var cpuTime = System.Diagnostics.Process.GetCurrentProcess().TotalProcessorTime - cpu;
        return new Run(metrics, cpuTime, GC.CollectionCount(2) - gen2, index.GetStatus().DocumentCount);
    }

    private sealed record Run(IndexMetrics Metrics, TimeSpan CpuTime, int Gen2Collections, long IndexedCount);

    // Lucene.Net is a large library: the first documents pay for JIT compilation of the whole
    // indexing chain. One small discarded build first, so the first measured row does not.
    private static async Task WarmUpAsync()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex();
        await index.BuildAsync(IndexTestEnvironment.Source(IndexTestEnvironment.Generate(2000))).WaitAsync(TimeSpan.FromMinutes(10));
    }
}
