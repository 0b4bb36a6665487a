using Indexing.Indexer.Tests.Index;
using Indexing.Prefetcher;

using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Store;
using Lucene.Net.Util;
using Microsoft.Extensions.Options;

namespace Indexing.Indexer.Tests.Threads;

/// <summary>
/// Indexing threads and Lucene's merge threads run at IndexOptions.IndexingThreadNice, as the
/// kernel reports it in /proc (not as ThreadNice says): a build's workers while the build runs, the
/// workers IndexingThread starts, a merge thread of the merge scheduler. The thread that starts them
/// is left as it was. Linux only, as the feature is (the CI machine runs Linux).
/// Alone (no other test class at the same time): it finds the workers by thread name across the
/// process, and another class's build has workers of the same names.
/// </summary>
[Collection(TimingSensitive.Name)]
public sealed class ThreadNiceTests
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData(7)]
    [InlineData(ThreadNice.Lowest)]
    public async Task IndexingThreadStart_Nice_TheWorkRunsAtThatNiceAndTheCallerIsUntouched(int nice)
    {
        var before = ThreadStat.CurrentNice();
        var seen = -100;

        await IndexingThread.Start("nice-test", nice, () => seen = ThreadStat.CurrentNice()).WaitAsync(_hangGuard);

        Assert.Equal(Math.Max(before, nice), seen);
        Assert.Equal(before, ThreadStat.CurrentNice());
        Assert.Null(ThreadNice.UnsupportedReason);
    }

    [Fact]
    public async Task IndexingThreadStart_NiceZero_LeavesTheThreadAtTheProcessNice()
    {
        var before = ThreadStat.CurrentNice();
        var seen = -100;

        await IndexingThread.Start("nice-test", 0, () => seen = ThreadStat.CurrentNice()).WaitAsync(_hangGuard);

        Assert.Equal(before, seen);
    }

    [Fact]
    public async Task IndexingThreadStart_WorkThrows_TheTaskCarriesTheException()
    {
        var task = IndexingThread.Start("nice-test", 5, () => throw new InvalidDataException("bad batch"));

        var error = await Assert.ThrowsAsync<InvalidDataException>(() => task.WaitAsync(_hangGuard));
        Assert.Equal("bad batch", error.Message);
    }

    [Fact]
    public async Task BuildAsync_TwoIndexingThreads_RunAtTheConfiguredNiceWhileBuilding()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(options: new IndexOptions { IndexingThreads = 2, IndexingThreadNice = 9, TakeMaxDocuments = 10 });
        var documents = IndexTestEnvironment.Generate(40);
        var source = new PausingSource(IndexTestEnvironment.Source(documents, snapshotEtag: 40), pauseAtTake: 3);

        var build = index.BuildAsync(source);
        await source.Paused.WaitAsync(_hangGuard);
        // The feeder waits in its third take, so both workers are alive: idle, or indexing what they hold.
        var workers = ThreadStat.Named("indexing-1").Concat(ThreadStat.Named("indexing-2")).ToList();
        source.Resume();
        var metrics = await build.WaitAsync(_hangGuard);

        Assert.Equal(2, workers.Count);
        Assert.All(workers, w => Assert.Equal(Math.Max(9, ThreadStat.CurrentNice()), w.Nice));
        Assert.Equal(40, metrics.Documents);
        // The workers end with the build (a lowered thread is never reused); the OS thread goes
        // a moment after the managed one, so this waits for it, up to the hang guard.
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (ThreadStat.Named("indexing-1").Concat(ThreadStat.Named("indexing-2")).Any())
        {
            Assert.True(waited.Elapsed < _hangGuard, "the indexing threads outlived their build");
            await Task.Delay(50);
        }
    }

    [Fact]
    public void MergeScheduler_AMerge_RunsOnAThreadAtTheConfiguredNice()
    {
        var path = Path.Combine(Path.GetTempPath(), "indexing-indexer-tests", Guid.NewGuid().ToString("N"));
        var seen = new List<(string? Thread, int Nice, int? Reported)>();
        var callerBefore = ThreadStat.CurrentNice();
        System.IO.Directory.CreateDirectory(path);
        try
        {
            using (var directory = FSDirectory.Open(new DirectoryInfo(path)))
            using (var analyzer = new StandardAnalyzer(LuceneVersion.LUCENE_48))
            using (var writer = new IndexWriter(directory, new IndexWriterConfig(LuceneVersion.LUCENE_48, analyzer)
            {
                MergeScheduler = new LowPriorityMergeScheduler(6, () => { lock (seen) { seen.Add((Thread.CurrentThread.Name, ThreadStat.CurrentNice(), ThreadNice.CurrentThreadNice())); } }),
            }))
            {
                // Three segments, then one: ForceMerge hands the merge to the scheduler and waits for it.
                for (var segment = 0; segment < 3; segment++)
                {
                    writer.AddDocument([new TextField("text", $"segment {segment}", Field.Store.NO)]);
                    writer.Commit();
                }

                writer.ForceMerge(1);
            }

            // A merge thread inherits its creator's nice value, so the expectation follows the caller's.
            var expected = Math.Max(6, ThreadStat.CurrentNice());
            Assert.NotEmpty(seen);
            Assert.True(
                seen.TrueForAll(merge => merge.Nice == expected),
                $"expected every merge at nice {expected}; the caller ({(Thread.CurrentThread.IsThreadPoolThread ? "a pool thread" : "a dedicated thread")}) was at {callerBefore} before and {ThreadStat.CurrentNice()} after; merges ran on " +
                string.Join(", ", seen.Select(merge => $"'{merge.Thread}' at {merge.Nice} (getpriority {merge.Reported})")) +
                $"; unsupported: {ThreadNice.UnsupportedReason ?? "no"}");
        }
        finally
        {
            System.IO.Directory.Delete(path, recursive: true);
        }
    }

    [Theory]
    [InlineData(-1)]
    [InlineData(20)]
    public void IndexingThreadNice_OutsideZeroTo19_IsRefusedNamingTheSettingAndRange(int nice)
    {
        var error = Assert.Throws<OptionsValidationException>(
            () => OptionProblems.ThrowIfInvalid(new IndexOptionsValidator(), new IndexOptions { IndexingThreadNice = nice }));

        Assert.StartsWith($"Indexes:IndexingThreadNice is {nice}; it must be from 0 to 19", error.Message, StringComparison.Ordinal);
    }

    // Hands out the inner source's batches; the take numbered pauseAtTake waits until Resume.
    private sealed class PausingSource(IBatchSource inner, int pauseAtTake) : IBatchSource
    {
        private readonly TaskCompletionSource _paused = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly TaskCompletionSource _resume = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _takes;

        public Task Paused => _paused.Task;

        public PrefetchPressure Pressure => inner.Pressure;

        public long SnapshotEtag => inner.SnapshotEtag;

        public string? HandedOutThrough => inner.HandedOutThrough;

        public PrefetchPipeline? Pipeline => inner.Pipeline;

        public void Resume() => _resume.TrySetResult();

        public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
        {
            if (++_takes == pauseAtTake)
            {
                _paused.TrySetResult();
                await _resume.Task.WaitAsync(cancellationToken).ConfigureAwait(false);
            }

            return await inner.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false);
        }

        public ValueTask DisposeAsync() => inner.DisposeAsync();
    }
}
