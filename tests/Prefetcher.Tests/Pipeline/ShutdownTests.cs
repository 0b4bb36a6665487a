using System.Diagnostics;
using Indexing.Storage;
using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>Cancellation and disposal: every reader stops, the source is released once, every byte returns.</summary>
public sealed class ShutdownTests(ITestOutputHelper output)
{
    // The reads these tests interrupt last minutes, so a run that waited them out cannot finish within
    // Strategies.Patience.
    private static readonly TimeSpan LongRead = TimeSpan.FromMinutes(5);

    // The promise is "about a second" (measured 1-4 ms). It is timed to the source's release, which the
    // last reader does on its own thread: the test's resumption on the thread pool, which a busy machine
    // delays by seconds, is not part of it.
    private static readonly TimeSpan Prompt = TimeSpan.FromSeconds(2);

    [Fact]
    public async Task Cancel_MidRun_StopsEveryThreadAndReleasesSourceAndBudget()
    {
        // The first reads are quick (plus the modelled disk), so a take succeeds; every later one is long.
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(4000, 16 * TestCollections.KiB)) { ReadDelay = LongRead, UndelayedReads = 4 };
        using var cancellation = new CancellationTokenSource();
        var options = new PrefetchOptions { Controller = new ControllerOptions { InitialConcurrency = 4, MaxConcurrency = 8 } };
        var prefetcher = Strategies.StartAdaptive(Strategies.OnModelledDisk(source), options, cancellation.Token);
        await prefetcher.TakeAsync(100, TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);
        await Strategies.EventuallyAsync(() => source.ReadCalls > source.UndelayedReads, "a long read has started");

        var cancelledAt = Stopwatch.GetTimestamp();
        cancellation.Cancel();
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);
        var stopped = Stopwatch.GetElapsedTime(cancelledAt, source.FirstDisposedAt);
        foreach (var thread in prefetcher.Threads)
        {
            Assert.True(thread.Join(Strategies.Patience), $"Thread '{thread.Name}' did not exit.");
        }

        output.WriteLine($"Cancelled with reads in flight: readers stopped and the source was released in {stopped.TotalMilliseconds:0.0} ms ({prefetcher.Threads.Count} threads).");
        Assert.True(stopped < Prompt, $"Stopping took {stopped}.");
        Assert.Equal(1, source.DisposeCount);
        Assert.Equal(0, source.OpenReads);
        Assert.Equal(0, source.ReadsAfterDispose);
        Assert.Equal(0, prefetcher.Admission.Snapshot().InFlightBytes);
        Assert.Equal(PrefetchState.Cancelled, prefetcher.State);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => prefetcher.TakeAsync(10, 1000).AsTask());

        await prefetcher.DisposeAsync();
        await prefetcher.DisposeAsync();
        Assert.Equal(1, source.DisposeCount);
        Assert.Equal(0, prefetcher.Admission.Snapshot().BufferedBytes);
        Assert.Equal(PrefetchState.Cancelled, prefetcher.Pressure.State);
    }

    [Fact]
    public async Task DisposeAsync_DuringLongReads_InterruptsThemPromptly()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(100, TestCollections.KiB)) { ReadDelay = LongRead };
        var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions());
        await Strategies.EventuallyAsync(() => source.OpenReads > 0, "a read is open");

        var disposingAt = Stopwatch.GetTimestamp();
        await prefetcher.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);
        var released = Stopwatch.GetElapsedTime(disposingAt, source.FirstDisposedAt);

        output.WriteLine($"Disposed during 5-minute reads: the source was released in {released.TotalMilliseconds:0.0} ms.");
        Assert.True(released < Prompt, $"Releasing the source took {released}.");
        Assert.All(prefetcher.Threads, thread => Assert.True(thread.Join(Strategies.Patience), $"Thread '{thread.Name}' did not exit."));
        Assert.Equal(1, source.DisposeCount);
        Assert.Equal(0, source.OpenReads);
        var budget = prefetcher.Admission.Snapshot();
        Assert.Equal(0, budget.UsedBytes);
        await Assert.ThrowsAsync<ObjectDisposedException>(() => prefetcher.TakeAsync(10, 1000).AsTask());
    }

    [Theory]
    [MemberData(nameof(Strategies.All), MemberType = typeof(Strategies))]
    public async Task DisposeAsync_AfterSomeTakes_ReleasesSourceOnceAndReturnsEveryByte(string strategy)
    {
        // A 4 MiB budget for 24 MB: no strategy can finish before the consumer takes more.
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(3000, 8 * TestCollections.KiB));
        var prefetcher = Strategies.Start(strategy, Strategies.OnModelledDisk(source), new PrefetchOptions { BudgetBytes = 4 * TestCollections.MiB });
        await prefetcher.TakeAsync(100, TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);
        await prefetcher.TakeAsync(100, TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);

        await prefetcher.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);
        await prefetcher.DisposeAsync();

        Assert.Equal(1, source.DisposeCount);
        Assert.Equal(0, source.OpenReads);
        Assert.Equal(0, source.ReadsAfterDispose);
        var pressure = prefetcher.Pressure;
        Assert.Equal(PrefetchState.Cancelled, pressure.State);
        Assert.Equal(0, pressure.InFlightBytes);
        Assert.Equal(0, pressure.BufferedBytes);
        Assert.True(pressure.DocumentsDone >= 2);
    }

    [Fact]
    public async Task Cancel_FixedBatchReaderWaiting_ThreadExits()
    {
        var source = new InMemoryReadSourceDouble(TestCollections.Uniform(3000, TestCollections.KiB));
        using var cancellation = new CancellationTokenSource();
        var prefetcher = Strategies.Start(Strategies.FixedBatch, source, new PrefetchOptions(), batchDocuments: 100, cancellation.Token);
        await prefetcher.TakeAsync(10, TestCollections.MiB).AsTask().WaitAsync(Strategies.Patience);

        cancellation.Cancel();
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);

        Assert.All(prefetcher.Threads, thread => Assert.True(thread.Join(Strategies.Patience), $"Thread '{thread.Name}' did not exit."));
        Assert.Equal(1, source.DisposeCount);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => prefetcher.TakeAsync(10, 1000).AsTask());
        await prefetcher.DisposeAsync();
        Assert.Equal(0, prefetcher.Pressure.BufferedBytes);
    }

    [Theory]
    [InlineData(Strategies.Adaptive)]
    [InlineData(Strategies.FixedBatch)] // (sequential reads nothing until a take asks)
    public async Task DisposeAsync_CancelledRunSourceDisposeThrows_ThrowsTheReleaseFailure(string strategy)
    {
        // The run is already Cancelled when the source is released, so the failure cannot become the
        // run's; it must not vanish either (a snapshot that failed to release is a leak to know about).
        var inner = new InMemoryReadSourceDouble(TestCollections.Uniform(100, TestCollections.KiB)) { ReadDelay = LongRead };
        var source = new ThrowingDisposeSource(inner);
        var prefetcher = Strategies.Start(strategy, source);
        await Strategies.EventuallyAsync(() => inner.OpenReads > 0, "a read is open");

        var failure = await Assert.ThrowsAsync<IOException>(() => prefetcher.DisposeAsync().AsTask().WaitAsync(Strategies.Patience));

        Assert.Equal("snapshot release failed", failure.Message);
        Assert.Equal(1, inner.DisposeCount);
        Assert.Equal(PrefetchState.Cancelled, prefetcher.Pressure.State);
    }

    [Fact]
    public async Task ReadAll_SourceDisposeThrowsAtTheEnd_ConsumerGetsTheReleaseFailure()
    {
        var inner = new InMemoryReadSourceDouble(TestCollections.Uniform(100, TestCollections.KiB));
        await using var prefetcher = Strategies.StartAdaptive(new ThrowingDisposeSource(inner), new PrefetchOptions());

        var failure = await Assert.ThrowsAsync<IOException>(() => Strategies.DrainWithPatienceAsync(prefetcher));

        Assert.Equal("snapshot release failed", failure.Message);
        Assert.Equal(PrefetchState.Failed, prefetcher.Pressure.State);
        Assert.Equal(failure.Message, prefetcher.Pressure.Failure);
    }

    [Fact]
    public async Task ReleaseSource_ReturningUnstartedTasksThrows_StillDisposesTheSourceAndFailsTheRun()
    {
        // The first task is held, so the hook is in place before the run can end.
        using var firstReadMayFinish = new ManualResetEventSlim(false);
        var inner = new InMemoryReadSourceDouble(TestCollections.Uniform(10, 100));
        var prefetcher = Strategies.StartAdaptive(new HoldTaskSource(inner, firstReadMayFinish), new PrefetchOptions());
        prefetcher.BeforeSourceRelease = static () => throw new InvalidOperationException("hook failed");

        firstReadMayFinish.Set();
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);

        Assert.Equal(1, inner.DisposeCount);
        Assert.Equal(PrefetchState.Failed, prefetcher.State);
        var failure = await Assert.ThrowsAsync<InvalidOperationException>(() => Strategies.DrainWithPatienceAsync(prefetcher));
        Assert.Equal("hook failed", failure.Message);
        await prefetcher.DisposeAsync();
    }

    [Fact]
    public async Task ReaderThread_ExceptionOutsideTheRead_FailsTheRunAndTheThreadExits()
    {
        // A bookkeeping bug around a read, forced: the test returns the held read's bytes and slot
        // itself, so the reader's own return finds nothing to return and throws on its thread.
        using var firstReadMayFinish = new ManualResetEventSlim(false);
        var inner = new InMemoryReadSourceDouble(TestCollections.Uniform(10, 100));
        await using var prefetcher = Strategies.StartAdaptive(new HoldTaskSource(inner, firstReadMayFinish), new PrefetchOptions());
        await Strategies.EventuallyAsync(() => inner.ReadCalls == 0 && prefetcher.Admission.Snapshot().Running == 1, "the first read is held");
        prefetcher.Admission.ReadEnded(1000, actualBytes: null);

        firstReadMayFinish.Set();

        var failure = await Assert.ThrowsAsync<InvalidOperationException>(() => Strategies.DrainWithPatienceAsync(prefetcher));
        Assert.Contains("a read returns only what it was admitted with", failure.Message, StringComparison.Ordinal);
        Assert.All(prefetcher.Threads, thread => Assert.True(thread.Join(Strategies.Patience), $"Thread '{thread.Name}' did not exit."));
        Assert.Equal(PrefetchState.Failed, prefetcher.Pressure.State);
    }

    private sealed class ThrowingDisposeSource(IDocumentReadSource inner) : IDocumentReadSource
    {
        public long SnapshotEtag => inner.SnapshotEtag;

        public string? StartAfterId => inner.StartAfterId;

        public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken) => inner.ScanMetadata(cancellationToken);

        public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken) =>
            inner.Read(task, destination, cancellationToken);

        public void Dispose()
        {
            inner.Dispose();
            throw new IOException("snapshot release failed");
        }
    }
}
