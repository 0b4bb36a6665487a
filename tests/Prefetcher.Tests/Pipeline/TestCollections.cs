namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Documents for pipeline tests: ids "docs/000000".. in key order, bodies of seeded random bytes
/// whose sizes follow the shared size shapes. Giants of the rare-giants shape are scaled down to
/// 0.5-5 MiB so the suite stays fast.
/// </summary>
internal static class TestCollections
{
    public const long KiB = 1024;
    public const long MiB = 1024 * KiB;

    public static List<(string Id, byte[] Body)> Shaped(string shape, int count, int seed = 7)
    {
        var sizes = SizeShapes.Generate(shape, count, seed);
        if (shape == SizeShapes.RareGiants)
        {
            for (var i = 0; i < sizes.Length; i++)
            {
                sizes[i] = sizes[i] >= 2 * MiB ? sizes[i] / 4 : sizes[i];
            }
        }

        return FromSizes(sizes, seed);
    }

    public static List<(string Id, byte[] Body)> Uniform(int count, long size, int seed = 7) =>
        FromSizes(Enumerable.Repeat(size, count).ToArray(), seed);

    public static List<(string Id, byte[] Body)> FromSizes(IReadOnlyList<long> sizes, int seed = 7)
    {
        var random = new Random(seed);
        var documents = new List<(string, byte[])>(sizes.Count);
        for (var i = 0; i < sizes.Count; i++)
        {
            var body = new byte[sizes[i]];
            random.NextBytes(body);
            documents.Add((Id(i), body));
        }

        return documents;
    }

    public static string Id(int index) => $"docs/{index:D6}";
}
