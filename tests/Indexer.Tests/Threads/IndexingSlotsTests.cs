using System.Collections.Concurrent;
using Indexing.Indexer.Tests.SideBySide;

namespace Indexing.Indexer.Tests.Threads;

// IndexingSlots: the engine's indexing threads as one pool. Slots are granted first come first
// served, a cancelled waiter gives up its turn, and two builds of an index manager running at once
// (one shared pass) never index more batches at a time than Indexes:IndexingThreads, taking turns.
public sealed class IndexingSlotsTests
{
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Enter_WaitersAreServedInTheOrderTheyCame()
    {
        var slots = new IndexingSlots(1);
        slots.Enter(CancellationToken.None);
        var order = new ConcurrentQueue<int>();
        var first = StartWaiter(slots, order, 1);
        WaitUntil(() => slots.Waiting == 1);
        var second = StartWaiter(slots, order, 2);
        WaitUntil(() => slots.Waiting == 2);

        slots.Exit();
        await first.WaitAsync(Patience);
        await second.WaitAsync(Patience);

        Assert.Equal([1, 2], order);
        Assert.Equal(0, slots.InUse);
        Assert.Equal((3L, 2L), slots.Granted);
    }

    [Fact]
    public async Task Enter_Cancelled_ThrowsHoldingNone_AndTheNextWaiterGetsTheSlot()
    {
        var slots = new IndexingSlots(1);
        slots.Enter(CancellationToken.None);
        using var cancel = new CancellationTokenSource();
        var cancelled = Task.Factory.StartNew(() => slots.Enter(cancel.Token), TaskCreationOptions.LongRunning);
        WaitUntil(() => slots.Waiting == 1);
        var order = new ConcurrentQueue<int>();
        var next = StartWaiter(slots, order, 2);
        WaitUntil(() => slots.Waiting == 2);

        cancel.Cancel();
        await Assert.ThrowsAsync<OperationCanceledException>(() => cancelled.WaitAsync(Patience));
        await Task.Delay(200);
        Assert.False(next.IsCompleted);
        slots.Exit();
        await next.WaitAsync(Patience);
        Assert.Equal([2], order);
        Assert.Equal(0, slots.InUse);
    }

    [Fact]
    public void Exit_WithoutEnter_IsRefused()
    {
        var slots = new IndexingSlots(2);
        Assert.Throws<InvalidOperationException>(slots.Exit);
        Assert.Throws<ArgumentOutOfRangeException>(() => new IndexingSlots(0));
    }

    // Two builds with one indexing thread each, in one manager whose pool has one slot: without the
    // pool their two workers index at once; with it, one batch at a time, and the builds take turns.
    [Fact]
    public async Task TwoBuildsInOneManager_IndexOneBatchAtATime_AndTakeTurns()
    {
        using var env = new ManagerEnvironment(documents: 600);
        var active = 0;
        var most = 0;
        var writers = new ConcurrentQueue<int>();
        var options = ManagerEnvironment.FastOptions();
        var manager = env.OpenManager(options with
        {
            Index = options.Index with
            {
                IndexingThreads = 1,
                MaxConcurrentRebuilds = 2,
                // Both builds in one pass however loaded the machine, so they run side by side.
                SharedPassWindow = TimeSpan.FromSeconds(10),
                TakeMaxDocuments = 20,
                BuildDocumentHook = _ =>
                {
                    var now = Interlocked.Increment(ref active);
                    InterlockedMax(ref most, now);
                    writers.Enqueue(Environment.CurrentManagedThreadId);
                    Thread.SpinWait(20_000);
                    Interlocked.Decrement(ref active);
                },
            },
        });

        manager.CreateOrUpdate(ManagerEnvironment.Named(ManagerEnvironment.V1Json, "a"));
        manager.CreateOrUpdate(ManagerEnvironment.Named(ManagerEnvironment.V1Json, "b"));
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "a")).Phase);
        Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "b")).Phase);

        Assert.Equal(1, most);
        var sequence = writers.ToList();
        var threads = sequence.Distinct().ToList();
        Assert.Equal(2, threads.Count);
        // Turns: each build's worker wrote before the other's last write, not one build after the other.
        Assert.True(sequence.IndexOf(threads[1]) < sequence.LastIndexOf(threads[0]), "the second build began only after the first ended");
        Assert.True(manager.Verify("a").IsConsistent);
        Assert.True(manager.Verify("b").IsConsistent);
    }

    private static Task StartWaiter(IndexingSlots slots, ConcurrentQueue<int> order, int number) =>
        Task.Factory.StartNew(
            () =>
            {
                slots.Enter(CancellationToken.None);
                order.Enqueue(number);
                slots.Exit();
            },
            TaskCreationOptions.LongRunning);

    private static void WaitUntil(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "timed out waiting");
            Thread.Sleep(5);
        }
    }

    private static void InterlockedMax(ref int target, int value)
    {
        int seen;
        while ((seen = Volatile.Read(ref target)) < value && Interlocked.CompareExchange(ref target, value, seen) != seen)
        {
        }
    }
}
