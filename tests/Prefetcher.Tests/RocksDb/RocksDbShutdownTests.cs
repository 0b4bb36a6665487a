using System.Diagnostics;
using Indexing.Storage;
using Xunit.Abstractions;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The real shutdown bound. A RocksDB Get or MultiGet cannot be interrupted: once issued it runs to
/// the end, so cancellation stops the readers when the store calls in flight return, not sooner.
/// The bound is therefore the longest single store call in flight (a Get of the largest document,
/// a MultiGet of up to <see cref="StoreSnapshotSource.MultiGetMaxDocuments"/> documents; a range
/// read checks the token between rows), plus the time to notice. The test double's interruptible
/// delay hides this; here a giant's Get is made to be in flight when the token fires.
/// </summary>
[Collection(TimingSensitive.Name)]
public sealed class RocksDbShutdownTests(ITestOutputHelper output)
{
    private const long GiantBytes = 48 * TestCollections.MiB;

    [Fact]
    public async Task Cancel_DuringAGiantGet_ReadersStopOnlyAfterThatGetReturnsAndThenPromptly()
    {
        using var temp = new TempStore();
        var small = RocksDbPrefetchTests.JsonOfSize(2048);
        var documents = Enumerable.Range(0, 400)
            .Select(i => new DocumentWrite($"orders/{i:D8}", i == 100 ? RocksDbPrefetchTests.JsonOfSize(GiantBytes) : small))
            .ToList();
        temp.Store.PutMany(documents);

        using var giantIssued = new ManualResetEventSlim();
        using var tokenFired = new ManualResetEventSlim();
        long giantReturned = 0;
        var giantReadFor = TimeSpan.Zero;
        var source = new StoreSnapshotSource(temp.Store.CreateSnapshot(), "orders", startAfterId: null)
        {
            // The giant's read has passed its token check; it waits here until the token fired, so
            // its Get runs while the run is being cancelled, as an uninterruptible call in flight would.
            BeforeStoreCall = task =>
            {
                if (task.IsLargeDocument)
                {
                    giantIssued.Set();
                    tokenFired.Wait(Strategies.Patience);
                }
            },
            AfterStoreCall = task =>
            {
                if (task.IsLargeDocument)
                {
                    Volatile.Write(ref giantReturned, Stopwatch.GetTimestamp());
                }
            },
        };
        using var cancellation = new CancellationTokenSource();
        var prefetcher = Strategies.StartAdaptive(source, new PrefetchOptions(), cancellation.Token);
        Assert.True(await Task.Run(() => giantIssued.Wait(Strategies.Patience)), "The giant's read never started.");

        var cancelledAt = Stopwatch.GetTimestamp();
        cancellation.Cancel();
        tokenFired.Set();
        await prefetcher.ReadersStopped.WaitAsync(Strategies.Patience);
        var stoppedAt = Stopwatch.GetTimestamp();

        var returnedAt = Volatile.Read(ref giantReturned);
        Assert.True(returnedAt != 0, "The giant's Get never returned.");
        Assert.True(returnedAt <= stoppedAt, "The readers were reported stopped while the giant's Get was still running.");
        var getAfterCancel = Stopwatch.GetElapsedTime(cancelledAt, returnedAt);
        var afterGet = Stopwatch.GetElapsedTime(returnedAt, stoppedAt);
        output.WriteLine(
            $"cancelled during a {ByteSize.Format(GiantBytes)} Get: it returned {getAfterCancel.TotalMilliseconds:0.0} ms after the cancel; " +
            $"readers stopped {afterGet.TotalMilliseconds:0.0} ms after that ({Stopwatch.GetElapsedTime(cancelledAt, stoppedAt).TotalMilliseconds:0.0} ms in all).");

        // Loose hang guard, not a speed target: once the last call returned, stopping is bookkeeping
        // (measured in milliseconds). The time includes this test resuming on the thread pool, which a
        // busy machine can delay by seconds, so the bound only catches a reader that waits on something.
        Assert.True(afterGet < TimeSpan.FromSeconds(10), $"Readers took {afterGet} to stop after the last store call returned.");
        await prefetcher.DisposeAsync().AsTask().WaitAsync(Strategies.Patience);
        Assert.Equal(PrefetchState.Cancelled, prefetcher.Pressure.State);
        temp.AssertNoOpenHandles();
    }
}
