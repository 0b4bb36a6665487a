using System.Collections.Concurrent;

namespace Indexing.Prefetcher.Tests;

/// <summary>The reader threads: an exception escaping a read fails the run instead of ending the process.</summary>
public sealed class ReadWorkerPoolTests
{
    [Fact]
    public void Dispatch_ReadThrowsOutOfItsBookkeeping_FailureReportedAndThreadExits()
    {
        var failures = new ConcurrentQueue<Exception>();
        using var exited = new ManualResetEventSlim();
        var pool = new ReadWorkerPool(
            "test reader", 2, _ => throw new InvalidOperationException("bookkeeping bug"), () => { }, exited.Set, failures.Enqueue);

        Assert.True(pool.Dispatch(new ReadTask(0, "a", "a", 1, 1, IsLargeDocument: false, TargetBytes: 1, ["a"], [1])));

        Assert.True(exited.Wait(Strategies.Patience), "The reader thread did not exit.");
        Assert.All(pool.Threads, thread => Assert.True(thread.Join(Strategies.Patience), $"Thread '{thread.Name}' did not exit."));
        Assert.Equal("bookkeeping bug", Assert.Single(failures).Message);
    }
}
