namespace Indexing.Datasets;

// Owns the size of every document: a pure function of (spec, position), drawn from its own random
// stream so sizes can be planned without writing bodies, and the same sizes come out whether
// bodies are written or not. Also owns the stopping rule (count and/or byte target) shared by
// DatasetGenerator.Generate and PlannedSizes.
internal sealed class SizePlan
{
    internal const double UniformBytes = 4096;
    internal const double UniformJitter = 0.10;
    internal const double LogNormalMedianBytes = 4096;
    internal const double LogNormalSigma = 1.5;
    internal const double GrowingFirstBytes = 1024;
    internal const double GrowingFactor = 100;
    internal const double GrowingNoiseSigma = 0.25;
    internal const double SmallBytes = 2048;
    internal const double SmallJitter = 0.10;
    internal const int GiantEvery = 200;
    internal const double GiantMinBytes = 2 << 20;
    internal const double GiantMaxBytes = 20 << 20;

    // Past the planned count (bytes-only specs whose documents came out small) "growing" keeps
    // growing; the cap keeps the exponent finite for absurd overruns (MaxDocumentBytes clamps anyway).
    private const double MaxGrowingFraction = 100;

    private readonly DatasetSpec _spec;

    public SizePlan(DatasetSpec spec) => _spec = spec;

    public static double ExpectedMeanBytes(DatasetShape shape) => shape switch
    {
        DatasetShape.Uniform => UniformBytes,
        DatasetShape.LogNormal => LogNormalMedianBytes * Math.Exp(LogNormalSigma * LogNormalSigma / 2),
        // Mean of first * factor^f over f in [0, 1], times the mean of the log-normal noise.
        DatasetShape.Growing => GrowingFirstBytes * (GrowingFactor - 1) / Math.Log(GrowingFactor)
            * Math.Exp(GrowingNoiseSigma * GrowingNoiseSigma / 2),
        // Giants are log-uniform, whose mean is (max - min) / ln(max / min).
        DatasetShape.RareGiants => (SmallBytes * (GiantEvery - 1) / GiantEvery)
            + ((GiantMaxBytes - GiantMinBytes) / Math.Log(GiantMaxBytes / GiantMinBytes) / GiantEvery),
        _ => throw new ArgumentOutOfRangeException(nameof(shape), shape, $"dataset shape {(int)shape} is not defined."),
    };

    // Documents in key order until the spec's count or byte target is reached.
    public static IEnumerable<PlannedDocument> Documents(DatasetSpec spec)
    {
        var plan = new SizePlan(spec);
        var limit = spec.DocumentCount ?? long.MaxValue;
        var target = spec.TargetTotalBytes ?? long.MaxValue;
        long total = 0;
        for (long position = 0; position < limit && total < target; position++)
        {
            var size = plan.SizeAt(position);
            total += size;
            yield return new PlannedDocument(position, size);
        }
    }

    public int SizeAt(long position)
    {
        var rng = Prng.For(_spec.Seed, PrngStream.Sizes, position);
        var bytes = _spec.Shape switch
        {
            DatasetShape.Uniform => UniformBytes * Jitter(ref rng, UniformJitter),
            DatasetShape.LogNormal => LogNormalMedianBytes * Math.Exp(LogNormalSigma * rng.NextNormal()),
            DatasetShape.Growing => GrowingBytes(position, ref rng),
            DatasetShape.RareGiants => IsGiant(position)
                ? GiantMinBytes * Math.Pow(GiantMaxBytes / GiantMinBytes, rng.NextDouble())
                : SmallBytes * Jitter(ref rng, SmallJitter),
            _ => throw new InvalidOperationException($"dataset shape {_spec.Shape} has no size rule."),
        };
        return (int)Math.Clamp(Math.Round(bytes), DatasetSpec.MinDocumentBytes, _spec.MaxDocumentBytes);
    }

    // One giant in each block of GiantEvery positions, at a seeded offset: exactly 1/GiantEvery of
    // the documents, spread evenly through the key space rather than clustered, yet not periodic.
    public bool IsGiant(long position)
    {
        var block = position / GiantEvery;
        var slot = Prng.For(_spec.Seed, PrngStream.GiantSlot, block).Next(GiantEvery);
        return position % GiantEvery == slot;
    }

    private double GrowingBytes(long position, ref Prng rng)
    {
        var last = _spec.PlannedDocumentCount - 1;
        var fraction = last <= 0 ? 0 : Math.Min((double)position / last, MaxGrowingFraction);
        return GrowingFirstBytes * Math.Pow(GrowingFactor, fraction) * Math.Exp(GrowingNoiseSigma * rng.NextNormal());
    }

    private static double Jitter(ref Prng rng, double relative) => 1 + (relative * ((2 * rng.NextDouble()) - 1));
}

// A document's place in key order (0-based) and its exact body size.
internal readonly record struct PlannedDocument(long Position, int SizeBytes);
