namespace Indexing.Datasets.Tests;

// Theory data and small statistics shared by the test classes.
internal static class Shapes
{
    public static TheoryData<DatasetShape> All => [.. Enum.GetValues<DatasetShape>()];

    // Sizes of generated bodies (not the plan), so the statistics are about what a store receives.
    public static long[] GeneratedSizes(DatasetSpec spec)
    {
        var sizes = new List<long>();
        foreach (var document in DatasetGenerator.Generate(spec))
        {
            sizes.Add(document.SizeBytes);
        }

        return [.. sizes];
    }

    // Nearest-rank percentile of unsorted values.
    public static long Percentile(IEnumerable<long> values, double quantile)
    {
        var sorted = values.Order().ToArray();
        var rank = Math.Max(1, (int)Math.Ceiling(Math.Round(quantile * sorted.Length, 9)));
        return sorted[rank - 1];
    }

    // Mean of each tenth of the values in their order (the count must be a multiple of 10).
    public static double[] DecileMeans(long[] values)
    {
        Assert.Equal(0, values.Length % 10);
        var tenth = values.Length / 10;
        return [.. Enumerable.Range(0, 10).Select(d => values.Skip(d * tenth).Take(tenth).Average())];
    }
}
