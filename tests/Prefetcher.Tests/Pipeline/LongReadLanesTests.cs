using System.Collections.Immutable;

using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

public sealed class LongReadLanesTests
{
    private const long Target = 256 * 1024;

    [Fact]
    public void IsLong_LargeOrAloneAtMoreThanTwiceTheTarget_NotAtTheTargetNorInABaselineTask()
    {
        Assert.True(LongReadLanes.IsLong(Large(0, 40_000_000)));
        Assert.True(LongReadLanes.IsLong(Task(0, (2 * Target) + 1, Target)));
        Assert.False(LongReadLanes.IsLong(Task(0, 2 * Target, Target)));
        Assert.False(LongReadLanes.IsLong(Task(0, Target - 10, Target)));

        // The baselines cut by count against an unbounded target: however large, never long.
        var baseline = ReadPlanner.Plan([new DocumentMetadata("docs/1", 50_000_000, 1)], PlanOptions.FixedCount(1024)).Single();
        Assert.False(LongReadLanes.IsLong(baseline));
    }

    [Fact]
    public void Next_LongReadWithItsLaneTaken_SmallTasksCutAfterItPassIt_AndItGoesFirstWhenTheLaneFrees()
    {
        // L = 2: one lane for long reads.
        var plan = new Plan(Small(0), Large(1), Small(2), Large(3), Small(4), Small(5));
        var lanes = new LongReadLanes();

        Assert.Equal(0, Issue(lanes, plan, 2).Sequence);
        var first = Issue(lanes, plan, 2);
        Assert.Equal(1, first.Sequence);
        Assert.Equal(1, lanes.Running);
        Assert.Equal(2, Issue(lanes, plan, 2).Sequence);
        Assert.Equal(4, Issue(lanes, plan, 2).Sequence); // 3 waits for the lane
        Assert.Equal(5, Issue(lanes, plan, 2).Sequence);

        lanes.Ended(first);
        Assert.Equal(0, lanes.Running);
        Assert.Equal(3, Issue(lanes, plan, 2).Sequence);
        Assert.Null(lanes.Next(plan.Next, 2, long.MaxValue));
    }

    [Theory]
    [InlineData(1, 1)]
    [InlineData(2, 1)]
    [InlineData(3, 2)]
    [InlineData(4, 2)]
    [InlineData(32, 16)]
    public void Next_LongReadsTakeHalfOfLRoundedUp_WhileSmallTasksAreThere(int concurrency, int lanesForLongReads)
    {
        var tasks = Enumerable.Range(0, 40).Select(i => Large(i)).Append(Small(40)).ToArray();
        var plan = new Plan(tasks);
        var lanes = new LongReadLanes();

        var issued = Enumerable.Range(0, lanesForLongReads + 1).Select(_ => Issue(lanes, plan, concurrency).Sequence).ToList();

        // The lanes fill in key order; the small task passes the long reads that wait.
        Assert.Equal([.. Enumerable.Range(0, lanesForLongReads).Select(i => (long)i), 40L], issued);
        Assert.Equal(lanesForLongReads, lanes.Running);
    }

    [Fact]
    public void Next_ABudgetOfLongReadsWaiting_TheOldestGoesWhateverTheLanes_InKeyOrder()
    {
        // Nothing but long reads (the end of growing sizes): every slot still reads, in key order.
        var plan = new Plan(Enumerable.Range(0, 8).Select(i => Large(i, 10)).ToArray());
        var lanes = new LongReadLanes();

        var issued = Enumerable.Range(0, 8).Select(_ => Issue(lanes, plan, concurrency: 2, maxWaitingBytes: 25).Sequence).ToList();

        Assert.Equal(Enumerable.Range(0, 8).Select(i => (long)i), issued);
        Assert.Equal(8, lanes.Running);
        Assert.Null(lanes.Next(plan.Next, 2, 25));
    }

    [Fact]
    public void Next_PlanEnded_WaitingLongReadsGoInKeyOrder_ThenNull()
    {
        var plan = new Plan(Large(0), Large(1), Large(2), Small(3));
        var lanes = new LongReadLanes();

        Assert.Equal([0L, 3L, 1L, 2L], Enumerable.Range(0, 4).Select(_ => Issue(lanes, plan, 1).Sequence));
        Assert.Null(lanes.Next(plan.Next, 1, long.MaxValue));
        Assert.Equal(1, plan.EndsSeen);
    }

    [Fact]
    public void Ended_MoreOftenThanStarted_Throws()
    {
        var lanes = new LongReadLanes();
        var task = Large(7);
        lanes.Started(task);
        lanes.Ended(task);

        var error = Assert.Throws<InvalidOperationException>(() => lanes.Ended(task));
        Assert.Contains("task 7", error.Message);
    }

    private static ReadTask Issue(LongReadLanes lanes, Plan plan, int concurrency, long maxWaitingBytes = long.MaxValue)
    {
        var task = lanes.Next(plan.Next, concurrency, maxWaitingBytes) ?? throw new InvalidOperationException("nothing to issue");
        lanes.Started(task);
        return task;
    }

    private static ReadTask Small(long sequence) => Task(sequence, Target / 2, Target);

    private static ReadTask Large(long sequence, long bytes = 40_000_000) =>
        new(sequence, Id(sequence), Id(sequence), 1, bytes, IsLargeDocument: true, TargetBytes: 0, [Id(sequence)], [sequence + 1]);

    private static ReadTask Task(long sequence, long bytes, long target) =>
        new(sequence, Id(sequence), Id(sequence), 1, bytes, IsLargeDocument: false, target, [Id(sequence)], [sequence + 1]);

    private static string Id(long sequence) => $"docs/{sequence:D6}";

    // The planner's lazy sequence: each call cuts the next task; null at the end, counted.
    private sealed class Plan(params ReadTask[] tasks)
    {
        private readonly ImmutableArray<ReadTask> _tasks = [.. tasks];
        private int _next;

        public int EndsSeen { get; private set; }

        public ReadTask? Next()
        {
            if (_next < _tasks.Length)
            {
                return _tasks[_next++];
            }

            EndsSeen++;
            return null;
        }
    }
}
