namespace Indexing.Prefetcher.Tests;

/// <summary>
/// A document-size distribution along key order for the simulation. <see cref="NextSize"/> gets
/// the seeded random source and the document's position in key order.
/// </summary>
internal sealed record DocumentShape(string Name, Func<Random, long, long> NextSize)
{
    private const int KiB = 1024;

    public static DocumentShape Uniform4K { get; } = new("uniform ~4 KB", (random, _) => (2 * KiB) + random.Next((4 * KiB) + 1));

    public static DocumentShape LogNormal4K { get; } = new(
        "lognormal median 4 KB sigma 1.5",
        (random, _) => Math.Max(1, (long)(4 * KiB * Math.Exp(1.5 * StandardNormal(random)))));

    /// <summary>99.5% around 2 KB, 0.5% between 2 and 20 MB: the giants carry most of the bytes.</summary>
    public static DocumentShape RareGiants { get; } = new(
        "rare giants 99.5% ~2 KB, 0.5% 2-20 MB",
        (random, _) => random.NextDouble() < 0.005 ? random.NextInt64(2_000_000, 20_000_001) : KiB + random.Next((2 * KiB) + 1));

    /// <summary>Sizes grow geometrically from ~1 KB to ~100 KB over the first <paramref name="documents"/> keys.</summary>
    public static DocumentShape Growing100x(long documents) => new(
        "growing 1 KB to 100 KB along key order",
        (random, index) => (long)(KiB * Math.Pow(100, Math.Min(1.0, (double)index / documents)) * (0.5 + random.NextDouble())));

    private static double StandardNormal(Random random)
    {
        // Box-Muller; 1 - NextDouble() is in (0, 1], so the logarithm is finite.
        var u1 = 1.0 - random.NextDouble();
        var u2 = random.NextDouble();
        return Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
    }

    public override string ToString() => Name;
}
