using System.Diagnostics;
using Indexing.Datasets;
using Indexing.Indexer;

namespace Indexing.Measurement.Tests;

/// <summary>
/// IndexOnly and LuceneOnly time the same work: the build (LuceneOnly: the adds) and its final
/// commit, with the index opened before the clock starts and closed after it stops; LuceneOnly over
/// the in-memory limit extracts chunk by chunk outside its clock and still adds every document once.
/// The timing test makes opening and closing slow (seconds each) through the indexer's engine seam,
/// so a run that counted either would report more than that; the run itself indexes a few hundred
/// kilobytes.
/// </summary>
public sealed class BoundTimingTests
{
    private static readonly TimeSpan _slowStep = TimeSpan.FromSeconds(6);

    [Theory]
    [InlineData(RebuildMode.IndexOnly)]
    [InlineData(RebuildMode.Adaptive)]
    public async Task RunAsync_SlowOpenAndClose_AreLeftOutOfElapsed(RebuildMode mode)
    {
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 300_000);
        var options = new IndexOptions
        {
            OpenSink = (path, definition, indexOptions) =>
            {
                Thread.Sleep(_slowStep);
                return new SlowClosingSink(LuceneIndexSink.Open(path, definition, indexOptions), _slowStep);
            },
        };
        var workload = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory, options);
        await workload.LoadIntoMemoryAsync();

        var wall = Stopwatch.StartNew();
        var figures = await workload.RunAsync(mode, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        wall.Stop();

        Assert.Equal(environment.Written.Documents, figures.Documents);
        // Both slow steps happened during the run ...
        Assert.True(wall.Elapsed >= 2 * _slowStep, $"wall {wall.Elapsed}");
        // ... and neither is in its figures: a run that held either would report at least _slowStep.
        Assert.True(figures.Elapsed < _slowStep, $"elapsed {figures.Elapsed} with opening and closing each taking {_slowStep}");
        Assert.Empty(Directory.GetDirectories(environment.IndexesDirectory));
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task RunAsync_LuceneOnlyOverTheLimit_AddsEveryDocumentOnceFromSeveralPieces()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 2_000_000);
        var options = RebuildWorkload.SmallTakes with { IndexingThreads = 2 };
        var workload = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory, options) { InMemoryLimitBytes = 256 << 10 };
        await workload.LoadIntoMemoryAsync();
        Assert.False(workload.HoldsBodies);

        var wall = Stopwatch.StartNew();
        var figures = await workload.RunAsync(RebuildMode.LuceneOnly, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        wall.Stop();

        Assert.Equal(environment.Written.Documents, figures.Documents);
        Assert.Equal(environment.Written.Bytes, figures.Bytes);
        Assert.True(figures.IndexOnlyChunks > 1, $"{figures.IndexOnlyChunks} pieces");
        var untimed = Assert.NotNull(figures.IndexOnlyLoadingTime);
        Assert.True(untimed > TimeSpan.Zero, $"untimed {untimed}");
        Assert.True(figures.Elapsed + untimed <= wall.Elapsed, $"elapsed {figures.Elapsed}, untimed {untimed}, wall {wall.Elapsed}");
        Assert.Null(figures.IndexerStall);
        Assert.Empty(Directory.GetDirectories(environment.IndexesDirectory));
        environment.AssertNoOpenHandles();
    }

    // The Lucene engine with a close that takes a while (as one waiting for a long merge would).
    private sealed class SlowClosingSink(IIndexSink inner, TimeSpan delay) : IIndexSink
    {
        public IndexCheckpoint? OpenedCheckpoint => inner.OpenedCheckpoint;

        public IIndexSearcher Searcher => inner.Searcher;

        public bool WriterClosed => inner.WriterClosed;

        public long RamBufferBytes => inner.RamBufferBytes;

        public double RamBufferSizeMB => inner.RamBufferSizeMB;

        public void SetBulkLoading(bool bulk) => inner.SetBulkLoading(bulk);

        public IIndexSinkWriter CreateWriter() => inner.CreateWriter();

        public void Commit(IndexCheckpoint checkpoint) => inner.Commit(checkpoint);

        public void Refresh() => inner.Refresh();

        public void DeleteAll() => inner.DeleteAll();

        public IndexCheckpoint? RollbackToLastCommit() => inner.RollbackToLastCommit();

        public void Close(bool keepPending)
        {
            Thread.Sleep(delay);
            inner.Close(keepPending);
        }
    }
}
