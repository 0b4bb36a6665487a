namespace Indexing.Prefetcher.Tests;

// Seeded document-size shapes shared by the histogram and planner tests, so both are checked
// against the same distributions the prefetcher meets: mostly small, heavy-tailed, drifting, and
// small with rare giants.
internal static class SizeShapes
{
    public const string Uniform = "uniform ~4 KB";
    public const string LogNormal = "lognormal median 4 KB sigma 1.5";
    public const string Growing = "growing 100x along key order";
    public const string RareGiants = "99.5% ~2 KB, 0.5% 2-20 MB";

    public static TheoryData<string> All => [Uniform, LogNormal, Growing, RareGiants];

    public static long[] Generate(string shape, int count, int seed)
    {
        var random = new Random(seed);
        var sizes = new long[count];
        for (var i = 0; i < sizes.Length; i++)
        {
            sizes[i] = shape switch
            {
                Uniform => random.Next(3 * 1024, 5 * 1024 + 1),
                LogNormal => (long)Math.Max(1, 4096 * Math.Exp(1.5 * StandardNormal(random))),
                Growing => (long)(1024 * Math.Pow(100, (double)i / Math.Max(1, count - 1)) * (0.9 + (0.2 * random.NextDouble()))),
                RareGiants => random.Next(1000) < 995
                    ? random.Next(1536, 2561)
                    : random.NextInt64(2L * 1024 * 1024, (20L * 1024 * 1024) + 1),
                _ => throw new ArgumentOutOfRangeException(nameof(shape), shape, $"Unknown size shape '{shape}'."),
            };
        }

        return sizes;
    }

    // Box-Muller: one standard normal sample from two uniform ones.
    private static double StandardNormal(Random random)
    {
        var u1 = 1.0 - random.NextDouble();
        var u2 = random.NextDouble();
        return Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
    }
}
