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

    private static ReadSample Read(double megabytes, double milliseconds) =>
        new((long)(megabytes * 1e6), 1, TimeSpan.FromMilliseconds(milliseconds));

    [Fact]
    public void BytesPerSecond_ReadsAndReadsInFlight_IsLittlesLaw()
    {
        var measurement = new ThroughputMeasurement();
        // Four reads in flight throughout; the reads completed take 1 s per 60 MB.
        measurement.Add(0, Tick, [Read(6, 100), Read(12, 200)], 4 * Tick);
        measurement.Add(120_000_000, Tick, [Read(18, 300)], 4 * Tick);
        measurement.Add(0, Tick, [], 4 * Tick);

        Assert.True(measurement.FromReads);
        Assert.Equal(4 * 60e6, measurement.BytesPerSecond, 6);
    }

    [Fact]
    public void Add_UnsettledTick_CountsForLittlesLawButNotForBytesPerTick()
    {
        var measurement = new ThroughputMeasurement();
        // The readers' first tick: a burst of bytes that says nothing about their rate.
        measurement.Add(900_000_000, Tick, [Read(6, 100), Read(12, 200)], 4 * Tick, settled: false);

        Assert.Equal((TimeSpan.Zero, 0, Tick), (measurement.Time, measurement.TickCount, measurement.TimeWithUnsettled));
        Assert.False(measurement.FromReads);
        Assert.Equal(0, measurement.BytesPerSecond);

        measurement.Add(120_000_000, Tick, [Read(18, 300)], 4 * Tick);

        // Little's law over both ticks: four in flight, 1 s per 60 MB; bytes per tick only over the second.
        Assert.True(measurement.FromReads);
        Assert.Equal(4 * 60e6, measurement.BytesPerSecond, 6);
        Assert.Equal((Tick, 1), (measurement.Time, measurement.TickCount));
    }

    [Fact]
    public void RelativeError_GiantsCompletingInLumps_SmallFromTheReadsLargeFromTheTicks()
    {
        // 20 MB and 2 MB documents at 60 MB/s plus 2 ms: a tick sees one, several or none complete.
        var random = new Random(3);
        var fromReads = new ThroughputMeasurement();
        var fromTicks = new ThroughputMeasurement();
        for (var tick = 0; tick < 8; tick++)
        {
            var reads = Enumerable.Range(0, random.Next(0, 3)).Select(_ => random.Next(2) == 0 ? Read(20, 335.33) : Read(2, 35.33)).ToArray();
            var bytes = reads.Sum(r => r.Bytes);
            fromReads.Add(bytes, Tick, reads, 8 * Tick);
            fromTicks.Add(bytes, Tick, reads);
        }

        Assert.True(fromReads.FromReads);
        Assert.False(fromTicks.FromReads);
        Assert.InRange(fromReads.BytesPerSecond, 8 * 59e6, 8 * 60e6);
        Assert.True(fromReads.RelativeError < 0.01, $"from the reads: {fromReads.RelativeError:P1}");
        Assert.True(fromTicks.RelativeError > 0.1, $"from the ticks: {fromTicks.RelativeError:P1}");
    }

    [Fact]
    public void Add_ReadsIssuedBeforeTheMeasurementBegan_LeaveTheRateAlone()
    {
        // L grew at 10 s: reads issued before it (short, un-queued) must not set the new L's rate.
        var measurement = new ThroughputMeasurement();
        var growth = TimeSpan.FromSeconds(10);
        for (var tick = 1; tick <= 3; tick++)
        {
            var end = growth + (tick * Tick);
            measurement.Add(0, Tick, [Read(6, 100 + (tick * 250)), Read(6, 200)], 8 * Tick, issuedFrom: growth, tickEnd: end);
        }

        // The old reads (issued 100 ms before the growth) are out; the new ones take 200 ms per 6 MB.
        Assert.Equal(8 * 30e6, measurement.BytesPerSecond, 6);
    }
}
