using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

public sealed class PlanOptionsTests
{
    private const long KiB = PlanOptions.KiB;
    private const long MiB = PlanOptions.MiB;

    [Theory]
    [InlineData(256 * KiB)]
    [InlineData(1 * MiB)]
    [InlineData(64 * MiB)]
    [InlineData(256 * MiB)]
    [InlineData(8L * 1024 * MiB)]
    public void ForBudget_AnyBudget_FollowsTheDerivationRules(long budget)
    {
        var options = PlanOptions.ForBudget(budget);

        Assert.True(options.MaxTaskBytes <= budget / 4, $"MaxTaskBytes {options.MaxTaskBytes} lets fewer than four tasks fit {budget}.");
        Assert.InRange(options.DefaultTaskBytes, options.MinTaskBytes, options.MaxTaskBytes);
        Assert.Equal(Math.Min(Math.Clamp(budget / 16, 1 * MiB, 64 * MiB), options.MaxTaskBytes), options.LargeDocumentThresholdBytes);
        Assert.Equal(PlanOptions.DefaultMaxDocumentsPerTask, options.MaxDocumentsPerTask);
    }

    [Fact]
    public void ForBudget_QuarterGiB_GivesTheDocumentedValues()
    {
        var options = PlanOptions.ForBudget(256 * MiB);

        Assert.Equal(4 * MiB, options.DefaultTaskBytes);
        Assert.Equal(64 * KiB, options.MinTaskBytes);
        Assert.Equal(64 * MiB, options.MaxTaskBytes);
        Assert.Equal(16 * MiB, options.LargeDocumentThresholdBytes);
    }

    [Theory]
    [InlineData(256 * KiB)]
    [InlineData(1 * MiB)]
    [InlineData(4 * MiB - 1)]
    public void ForBudget_BelowFourMiB_DocumentTooBigToShareATaskIsReadAlone(long budget)
    {
        var options = PlanOptions.ForBudget(budget);
        var justOverMax = options.MaxTaskBytes + 1;

        var tasks = ReadPlanner.Plan([new DocumentMetadata("a", 1, 10), new DocumentMetadata("b", 2, justOverMax), new DocumentMetadata("c", 3, 10)], options).ToList();

        Assert.Equal(options.MaxTaskBytes, options.LargeDocumentThresholdBytes);
        Assert.Equal([false, true, false], tasks.Select(t => t.IsLargeDocument));
    }

    [Theory]
    [InlineData(100, 0, 1000, 10, 500, "minTaskBytes")]
    [InlineData(100, 10, 5, 10, 500, "maxTaskBytes")]
    [InlineData(5, 10, 1000, 10, 500, "defaultTaskBytes")]
    [InlineData(2000, 10, 1000, 10, 500, "defaultTaskBytes")]
    [InlineData(100, 10, 1000, 0, 500, "maxDocumentsPerTask")]
    [InlineData(100, 10, 1000, 10, 0, "largeDocumentThresholdBytes")]
    public void Constructor_InvalidCombination_ThrowsNamingTheParameter(
        long defaultBytes, long minBytes, long maxBytes, int maxDocuments, long largeBytes, string parameter)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new PlanOptions(defaultBytes, minBytes, maxBytes, maxDocuments, largeBytes));

        Assert.Equal(parameter, error.ParamName);
    }

    [Fact]
    public void ForBudget_NonPositive_Throws()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => PlanOptions.ForBudget(0));
    }

    [Theory]
    [InlineData(-5, 10)]
    [InlineData(50, 50)]
    [InlineData(5000, 1000)]
    public void ClampTarget_AnyValue_StaysWithinMinAndMax(long target, long expected)
    {
        var options = new PlanOptions(100, 10, 1000, 10, 500);

        Assert.Equal(expected, options.ClampTarget(target));
    }
}
