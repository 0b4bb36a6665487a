using System.Globalization;
using Indexing.Storage;
using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The default ceiling through the real pipeline: the modelled network disk (default parameters,
/// useful depth 16) in front of an endless collection of 64 KiB documents (one shared body, so
/// memory stays flat), read by a consumer that only counts (faster than the disk). Runs the
/// adaptive prefetcher with the default options (ceiling 64) against fixed L = 16 (the disk's depth)
/// and fixed L = 8 (the old 4 x cores ceiling here), and reports MB/s and mean L over the last third
/// of each run from the pressure history. PREFETCH_CEILING_SECONDS sets the adaptive run's length
/// (default 3, so the suite stays fast; the controller needs ~30 s to climb to 16, so quote 60 s);
/// fixed runs last a third of it. It asserts delivery only: figures go to the output.
/// </summary>
[Collection(TimingSensitive.Name)]
public sealed class CeilingFiguresTests(ITestOutputHelper output)
{
    private const long DocumentBytes = 64 * 1024;

    private static TimeSpan AdaptiveRun =>
        TimeSpan.FromSeconds(double.TryParse(Environment.GetEnvironmentVariable("PREFETCH_CEILING_SECONDS"), CultureInfo.InvariantCulture, out var s) && s > 0 ? s : 3);

    [Fact]
    public async Task Measure_FastConsumerOnModelledDisk_AdaptiveAgainstFixedL()
    {
        output.WriteLine($"{new NetworkDiskModelOptions()}; 64 KiB documents; consumer only counts; {Environment.ProcessorCount} cores");
        var fixed16 = await RunAsync("fixed L=16", new ControllerOptions { InitialConcurrency = 16, MaxConcurrency = 16, FixedConcurrency = 16 }, AdaptiveRun / 3);
        var fixed8 = await RunAsync("fixed L=8 (old ceiling)", new ControllerOptions { InitialConcurrency = 8, MaxConcurrency = 8, FixedConcurrency = 8 }, AdaptiveRun / 3);
        var adaptive = await RunAsync("adaptive, default ceiling 64", new ControllerOptions(), AdaptiveRun);

        Assert.True(fixed16 > 0 && fixed8 > 0 && adaptive > 0, "A run delivered nothing.");
    }

    private async Task<double> RunAsync(string label, ControllerOptions controller, TimeSpan length)
    {
        var source = Strategies.OnModelledDisk(new EndlessSource(DocumentBytes));
        var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions { Controller = controller });
        long documents = 0;
        await Task.Run(async () =>
        {
            var end = DateTime.UtcNow + length;
            while (DateTime.UtcNow < end)
            {
                var batch = await prefetcher.TakeAsync(4096, 256 * TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);
                Assert.NotNull(batch);
                documents += batch.Count;
            }
        });

        var history = prefetcher.Pressure.History;
        await prefetcher.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);
        var lastThird = history.Where(p => p.Elapsed >= length * 2 / 3).ToList();
        var megabytesPerSecond = lastThird.Count > 0 ? lastThird.Average(p => p.MegabytesPerSecond) : 0;
        var meanL = lastThird.Count > 0 ? lastThird.Average(p => p.ConcurrencyLimit) : 0;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{label}: {megabytesPerSecond:0} MB/s, mean L {meanL:0.0} over the last third of {length.TotalSeconds:0} s ({documents} documents in all)"));
        return documents;
    }

    /// <summary>An endless collection of equal documents sharing one body: the pipeline's costs without a store's memory.</summary>
    private sealed class EndlessSource(long documentBytes) : IDocumentReadSource
    {
        private readonly byte[] _body = new byte[documentBytes];

        public long SnapshotEtag => long.MaxValue / 2;

        public string? StartAfterId => null;

        public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken)
        {
            for (long i = 0; ; i++)
            {
                cancellationToken.ThrowIfCancellationRequested();
                yield return new DocumentMetadata($"endless/{i:D12}", i + 1, _body.Length);
            }
        }

        public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
        {
            for (var i = 0; i < task.DocumentCount; i++)
            {
                destination.Add(new PrefetchedDocument(task.Ids[i], task.Etags[i], _body));
            }
        }

        public void Dispose()
        {
        }
    }
}
