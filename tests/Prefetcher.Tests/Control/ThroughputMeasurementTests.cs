namespace Indexing.Prefetcher.Tests;

public sealed class ThroughputMeasurementTests
{
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(250);

    private static ThroughputMeasurement Measure(IEnumerable<long> bytesPerTick)
    {
        var measurement = new ThroughputMeasurement();
        foreach (var bytes in bytesPerTick)
        {
            measurement.Add(bytes, Tick);
        }
        return measurement;
    }

    [Fact]
    public void BytesPerSecond_IsTotalBytesOverTotalTime()
    {
        var measurement = Measure([100, 300]);

        Assert.Equal(800, measurement.BytesPerSecond);
        Assert.Equal(2 * Tick, measurement.Time);
    }

    [Fact]
    public void RelativeError_FewerThanThreeTicks_IsInfinite()
    {
        Assert.Equal(double.PositiveInfinity, Measure([100, 300]).RelativeError);
    }

    [Fact]
    public void RelativeError_MinimumTicks_IsFinite()
    {
        var measurement = Measure([100, 300, 200]);

        Assert.Equal(ThroughputMeasurement.MinTicksForError, measurement.TickCount);
        Assert.True(double.IsFinite(measurement.RelativeError));
    }

    [Fact]
    public void RelativeError_EdgeEffectsThatCancel_IsFarBelowIndependentNoiseOfTheSameSpread()
    {
        // A task completing just after a tick edge moves bytes into the next tick: +/- alternate.
        var alternating = Measure(Enumerable.Range(0, 16).Select(i => i % 2 == 0 ? 90L : 110L));
        var random = new Random(7);
        var independent = Measure(Enumerable.Range(0, 16).Select(_ => random.Next(2) == 0 ? 90L : 110L));

        Assert.True(alternating.RelativeError < independent.RelativeError / 2,
            $"alternating {alternating.RelativeError:P2}, independent {independent.RelativeError:P2}");
        Assert.InRange(independent.RelativeError, 0.015, 0.04);
    }

    [Fact]
    public void Reset_ForgetsEverything()
    {
        var measurement = Measure([100, 300, 200]);

        measurement.Reset();

        Assert.Equal((TimeSpan.Zero, 0.0), (measurement.Time, measurement.BytesPerSecond));
    }
}
