namespace Indexing.Datasets;

// SplitMix64: a 64-bit counter passed through a strong mixing function.
//
// Chosen over System.Random for two reasons. The output is fixed by this file, so a seed means
// the same bytes on every runtime version (System.Random's seeded sequence is an implementation
// detail). And a generator for any (seed, stream, position) is a couple of multiplies away, so
// every document's randomness derives from its position alone: documents can be generated in any
// order, or in parallel, and still come out byte-identical.
//
// A mutable struct passed by ref; copying it forks the sequence, which is never wanted here.
internal struct Prng
{
    private const ulong Golden = 0x9E3779B97F4A7C15;
    private const ulong PositionOdd = 0xD1B54A32D192ED03;
    private const double UnitScale = 1.0 / (1UL << 53);

    private ulong _state;

    private Prng(ulong state) => _state = state;

    // Independent sequences per stream, so e.g. planning sizes never consumes content randomness.
    public static Prng For(int seed, PrngStream stream, long position)
    {
        var root = Mix(((ulong)(long)seed * Golden) ^ (ulong)stream);
        return new Prng(Mix(root + ((ulong)position * PositionOdd)));
    }

    public ulong NextUInt64()
    {
        _state += Golden;
        return Mix(_state);
    }

    // Uniform in [0, 1), 53 random bits.
    public double NextDouble() => (NextUInt64() >> 11) * UnitScale;

    // Uniform in [0, maxExclusive) by multiply-shift; the bias (< maxExclusive / 2^32) is irrelevant here.
    public int Next(int maxExclusive) => (int)(((NextUInt64() >> 32) * (ulong)maxExclusive) >> 32);

    // Uniform in [minInclusive, maxInclusive].
    public int Next(int minInclusive, int maxInclusive) => minInclusive + Next(maxInclusive - minInclusive + 1);

    public bool Chance(double probability) => NextDouble() < probability;

    // Standard normal by Box-Muller; the second value of the pair is dropped to keep the state a single word.
    public double NextNormal()
    {
        var u1 = 1.0 - NextDouble();
        var u2 = NextDouble();
        return Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
    }

    private static ulong Mix(ulong z)
    {
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
        return z ^ (z >> 31);
    }
}

// Names of the independent random sequences. Values are part of the output: changing one changes every dataset.
internal enum PrngStream : ulong
{
    Sizes = 1,
    Content = 2,
    Vocabulary = 3,
    Customer = 4,
    Product = 5,
    GiantSlot = 6,
}
