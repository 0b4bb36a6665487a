using System.Collections;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

public sealed class ReadPlannerTests
{
    private const long KiB = PlanOptions.KiB;
    private const long MiB = PlanOptions.MiB;

    // Small MaxDocumentsPerTask so the count cut happens for the small shapes too.
    private static readonly PlanOptions ShapeOptions = new(
        defaultTaskBytes: 1 * MiB, minTaskBytes: 64 * KiB, maxTaskBytes: 16 * MiB, maxDocumentsPerTask: 512, largeDocumentThresholdBytes: 4 * MiB);

    [Theory]
    [MemberData(nameof(SizeShapes.All), MemberType = typeof(SizeShapes))]
    public void Plan_SizeShapeWithDefaultTarget_TasksCoverKeysInOrderWithinTarget(string shape)
    {
        var documents = Documents(SizeShapes.Generate(shape, 20_000, seed: 11));

        var tasks = ReadPlanner.Plan(documents, ShapeOptions).ToList();

        AssertValidPlan(documents, tasks, ShapeOptions);
        Assert.All(tasks.Where(t => !t.IsLargeDocument), t => Assert.Equal(ShapeOptions.DefaultTaskBytes, t.TargetBytes));
    }

    [Theory]
    [MemberData(nameof(SizeShapes.All), MemberType = typeof(SizeShapes))]
    public void Plan_SizeShapeWithChangingTarget_EachTaskCutAgainstTheClampedTargetReadAtItsStart(string shape)
    {
        var documents = Documents(SizeShapes.Generate(shape, 20_000, seed: 13));
        long[] schedule = [64 * KiB, 1 * MiB, 3 * MiB, 100 * MiB, 1, 512 * KiB];
        var calls = 0;

        var tasks = ReadPlanner.Plan(documents, ShapeOptions, () => schedule[calls++ % schedule.Length]).ToList();

        AssertValidPlan(documents, tasks, ShapeOptions);
        var cutAgainst = tasks.Where(t => !t.IsLargeDocument).Select(t => t.TargetBytes).ToList();
        Assert.Equal(calls, cutAgainst.Count);
        for (var i = 0; i < cutAgainst.Count; i++)
        {
            Assert.Equal(ShapeOptions.ClampTarget(schedule[i % schedule.Length]), cutAgainst[i]);
        }
    }

    [Fact]
    public void Plan_FirstTaskBytes_FirstTasksDoubleFromItToTheTargetAndAGiantTakesNoStep()
    {
        var options = new PlanOptions(defaultTaskBytes: 1000, minTaskBytes: 10, maxTaskBytes: 10_000, maxDocumentsPerTask: 1000,
            largeDocumentThresholdBytes: 5000, firstTaskBytes: 100);
        // 10-byte documents, with a giant as the third task.
        var sizes = Enumerable.Repeat(10L, 30).Append(6000).Concat(Enumerable.Repeat(10L, 400)).ToArray();

        var tasks = ReadPlanner.Plan(Documents(sizes), options).ToList();

        Assert.Equal([100L, 200, 0, 400, 800, 1000], tasks.Take(6).Select(t => t.TargetBytes));
        Assert.Equal([100L, 200, 6000, 400, 800], tasks.Take(5).Select(t => t.Bytes));
        Assert.All(tasks.Skip(5), t => Assert.Equal(1000, t.TargetBytes));
        // The tasks cut below the target are marked (their reads teach the queueing signal nothing).
        Assert.Equal([true, true, false, true, true, false], tasks.Take(6).Select(t => t.Ramp));
    }

    [Fact]
    public void Plan_FirstTaskBytesWithSeveralReaders_EachSizeGoesToAsManyTasksAsThereAreReaders()
    {
        var options = new PlanOptions(defaultTaskBytes: 1000, minTaskBytes: 10, maxTaskBytes: 10_000, maxDocumentsPerTask: 1000,
            largeDocumentThresholdBytes: 5000, firstTaskBytes: 100);
        // L is read at every cut: 3 readers for the first six tasks, then 4.
        var cuts = 0;

        var tasks = ReadPlanner.Plan(Documents([.. Enumerable.Repeat(10L, 1000)]), options, readers: () => cuts++ < 6 ? 3 : 4).ToList();

        Assert.Equal([100L, 100, 100, 200, 200, 200, 400, 400, 400, 400, 800, 800, 800, 800, 1000], tasks.Take(15).Select(t => t.TargetBytes));
        Assert.All(tasks.Skip(14), t => Assert.Equal(1000, t.TargetBytes));
        Assert.All(tasks.Take(14), t => Assert.True(t.Ramp));
    }

    [Fact]
    public void Plan_FirstTaskBytesAboveTheTarget_EveryTaskIsCutAgainstTheTarget()
    {
        var options = new PlanOptions(defaultTaskBytes: 100, minTaskBytes: 10, maxTaskBytes: 10_000, maxDocumentsPerTask: 1000,
            largeDocumentThresholdBytes: 5000, firstTaskBytes: 400);

        var tasks = ReadPlanner.Plan(Documents([.. Enumerable.Repeat(10L, 50)]), options).ToList();

        Assert.Equal([100L, 100, 100, 100, 100], tasks.Select(t => t.TargetBytes));
    }

    [Fact]
    public void ForBudget_WithAFirstTask_RampsFromItAndWithoutOneDoesNot()
    {
        Assert.Equal(256 * KiB, PlanOptions.ForBudget(256 * MiB, 256 * KiB).FirstTaskBytes);
        Assert.Equal(64 * KiB, PlanOptions.ForBudget(256 * MiB, 1).FirstTaskBytes);
        Assert.Null(PlanOptions.ForBudget(256 * MiB).FirstTaskBytes);
        Assert.Null(PlanOptions.FixedCount(1).FirstTaskBytes);
    }

    [Fact]
    public void Plan_LargeDocumentInTheMiddle_FlushesCurrentTaskAndStandsAlone()
    {
        var options = new PlanOptions(100, 10, 1000, 100, largeDocumentThresholdBytes: 500);
        var documents = Documents([10, 10, 501, 10]);

        var tasks = ReadPlanner.Plan(documents, options).ToList();

        Assert.Equal([2, 1, 1], tasks.Select(t => t.DocumentCount));
        Assert.Equal([false, true, false], tasks.Select(t => t.IsLargeDocument));
        Assert.Equal(documents[2].Id, tasks[1].FirstId);
        Assert.Equal(501, tasks[1].Bytes);
        Assert.Equal(0, tasks[1].TargetBytes);
    }

    [Fact]
    public void Plan_DocumentAboveTargetButNotLarge_IsASingleDocumentTask()
    {
        var options = new PlanOptions(100, 10, 1000, 100, largeDocumentThresholdBytes: 500);
        var documents = Documents([60, 300, 60]);

        var tasks = ReadPlanner.Plan(documents, options).ToList();

        Assert.Equal([60, 300, 60], tasks.Select(t => t.Bytes));
        Assert.All(tasks, t => Assert.False(t.IsLargeDocument));
    }

    [Fact]
    public void Plan_ManyEmptyDocuments_CutAtMaxDocumentsPerTask()
    {
        var options = new PlanOptions(100, 10, 1000, maxDocumentsPerTask: 4, largeDocumentThresholdBytes: 500);

        var tasks = ReadPlanner.Plan(Documents(new long[10]), options).ToList();

        Assert.Equal([4, 4, 2], tasks.Select(t => t.DocumentCount));
        Assert.Equal([0L, 1, 2], tasks.Select(t => t.Sequence));
    }

    [Fact]
    public void Plan_EmptyInput_YieldsNoTasks()
    {
        Assert.Empty(ReadPlanner.Plan([], ShapeOptions));
    }

    [Fact]
    public void Plan_HugeInput_YieldsFirstTaskAfterReadingOnlyItsDocumentsAndOneMore()
    {
        var source = new CountingDocuments(count: 10_000_000, sizeBytes: 4 * KiB);

        var plan = ReadPlanner.Plan(source, ShapeOptions);
        Assert.Equal(0, source.MoveNextCalls);

        using var tasks = plan.GetEnumerator();
        Assert.True(tasks.MoveNext());

        // The planner learns a task is full from the document that does not fit.
        Assert.Equal(256, tasks.Current.DocumentCount);
        Assert.Equal(tasks.Current.DocumentCount + 1, source.MoveNextCalls);
    }

    [Fact]
    public void Plan_OutOfOrderIds_ThrowsNamingBothIds()
    {
        DocumentMetadata[] documents = [new("apple", 1, 1), new("cherry", 1, 1), new("banana", 1, 1)];

        var error = Assert.Throws<InvalidOperationException>(() => ReadPlanner.Plan(documents, ShapeOptions).ToList());

        Assert.Contains("'banana' follows 'cherry'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Plan_DuplicateId_Throws()
    {
        DocumentMetadata[] documents = [new("a", 1, 1), new("a", 1, 1)];

        Assert.Throws<InvalidOperationException>(() => ReadPlanner.Plan(documents, ShapeOptions).ToList());
    }

    [Fact]
    public void Plan_SupplementaryCharacterAfterPrivateUseCharacter_AcceptedInUtf8Order()
    {
        // UTF-8 puts U+1F600 after U+E000; UTF-16 ordinal comparison would put it before.
        DocumentMetadata[] inUtf8Order = [new("k\uE000", 1, 1), new("k\U0001F600", 1, 1)];
        Assert.True(string.CompareOrdinal(inUtf8Order[0].Id, inUtf8Order[1].Id) > 0);

        Assert.Single(ReadPlanner.Plan(inUtf8Order, ShapeOptions));
        Assert.Throws<InvalidOperationException>(() => ReadPlanner.Plan(inUtf8Order.Reverse(), ShapeOptions).ToList());
    }

    [Fact]
    public void Plan_InvalidDocument_ThrowsNamingTheProblem()
    {
        var negative = Assert.Throws<InvalidOperationException>(() => ReadPlanner.Plan([new DocumentMetadata("a", 1, -3)], ShapeOptions).ToList());
        Assert.Contains("-3", negative.Message, StringComparison.Ordinal);
        Assert.Throws<InvalidOperationException>(() => ReadPlanner.Plan([default(DocumentMetadata)], ShapeOptions).ToList());
        var noEtag = Assert.Throws<InvalidOperationException>(() => ReadPlanner.Plan([new DocumentMetadata("a", 0, 3)], ShapeOptions).ToList());
        Assert.Contains("etag 0", noEtag.Message, StringComparison.Ordinal);
        Assert.Throws<ArgumentNullException>(() => ReadPlanner.Plan(null!, ShapeOptions));
    }

    private static DocumentMetadata[] Documents(long[] sizes)
    {
        var documents = new DocumentMetadata[sizes.Length];
        for (var i = 0; i < sizes.Length; i++)
        {
            documents[i] = new DocumentMetadata($"doc/{i:D8}", i + 1, sizes[i]);
        }

        return documents;
    }

    private static void AssertValidPlan(DocumentMetadata[] documents, List<ReadTask> tasks, PlanOptions options)
    {
        // Every document exactly once, in key order: the tasks concatenate back to the input.
        Assert.Equal(documents.Select(d => d.Id), tasks.SelectMany(t => t.Ids));

        var next = 0;
        for (var i = 0; i < tasks.Count; i++)
        {
            var task = tasks[i];
            var own = documents.AsSpan(next, task.DocumentCount);
            next += task.DocumentCount;
            long bytes = 0;
            foreach (var document in own)
            {
                bytes += document.SizeBytes;
            }

            Assert.Equal(i, task.Sequence);
            Assert.Equal(task.Ids.Length, task.DocumentCount);
            Assert.Equal(task.Ids[0], task.FirstId);
            Assert.Equal(task.Ids[^1], task.LastId);
            Assert.Equal(bytes, task.Bytes);
            Assert.InRange(task.DocumentCount, 1, options.MaxDocumentsPerTask);
            Assert.Equal(task.DocumentCount == 1 && bytes > options.LargeDocumentThresholdBytes, task.IsLargeDocument);
            if (!task.IsLargeDocument)
            {
                Assert.True(
                    task.Bytes <= task.TargetBytes || task.DocumentCount == 1,
                    $"Task {i} holds {task.Bytes} bytes in {task.DocumentCount} documents, over its target {task.TargetBytes}.");
            }

            // Balanced by bytes: a task is not cut early, only when the next document would not fit.
            if (!task.IsLargeDocument && i + 1 < tasks.Count && !tasks[i + 1].IsLargeDocument)
            {
                Assert.True(
                    task.DocumentCount == options.MaxDocumentsPerTask || task.Bytes + documents[next].SizeBytes > task.TargetBytes,
                    $"Task {i} was cut at {task.Bytes} bytes though '{documents[next].Id}' ({documents[next].SizeBytes} bytes) fit its target {task.TargetBytes}.");
            }
        }
    }

    // A long metadata scan that counts how far it has been read.
    private sealed class CountingDocuments(int count, long sizeBytes) : IEnumerable<DocumentMetadata>
    {
        public int MoveNextCalls { get; private set; }

        public IEnumerator<DocumentMetadata> GetEnumerator()
        {
            for (var i = 0; i < count; i++)
            {
                MoveNextCalls++;
                yield return new DocumentMetadata($"doc/{i:D8}", i + 1, sizeBytes);
            }

            MoveNextCalls++;
        }

        IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();
    }
}
