using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The foreground p99 a tick hands the controller: a tick lands anywhere in the histogram's
/// current second, so a p99 of the few Gets recorded so far in that second must not decide.
/// </summary>
public sealed class ForegroundSignalTests
{
    [Fact]
    public void P99_TickEarlyInASecond_JudgesTheFullSecondBeforeItToo()
    {
        var clock = new ManualClock();
        var histogram = new LatencyHistogram(clock);
        clock.Advance(TimeSpan.FromSeconds(5));
        for (var i = 0; i < 1000; i++)
        {
            histogram.Record(TimeSpan.FromMilliseconds(1));
        }

        // 250 ms into the next second: three slow Gets so far. Judged alone, their p99 is 50 ms
        // and the controller would halve L on three samples.
        clock.Advance(TimeSpan.FromSeconds(1));
        for (var i = 0; i < 3; i++)
        {
            histogram.Record(TimeSpan.FromMilliseconds(50));
        }

        clock.Advance(TimeSpan.FromMilliseconds(250));
        var p99 = ForegroundSignal.P99(histogram);

        Assert.NotNull(p99);
        Assert.True(p99 < TimeSpan.FromMilliseconds(2), $"p99 {p99} was judged on the three samples of a partly filled second.");
    }

    [Fact]
    public void P99_FewerSamplesThanTheMinimum_IsNoSignal()
    {
        var clock = new ManualClock();
        var histogram = new LatencyHistogram(clock);
        clock.Advance(TimeSpan.FromSeconds(5));
        for (var i = 0; i < ForegroundSignal.MinSamples - 1; i++)
        {
            histogram.Record(TimeSpan.FromMilliseconds(40));
        }

        Assert.Null(ForegroundSignal.P99(histogram));

        histogram.Record(TimeSpan.FromMilliseconds(40));
        Assert.NotNull(ForegroundSignal.P99(histogram));
    }

    [Fact]
    public void P99_NoHistogramOrSubResolutionGets_IsNoSignal()
    {
        Assert.Null(ForegroundSignal.P99(null));
        var histogram = new LatencyHistogram(new ManualClock());
        for (var i = 0; i < 2 * ForegroundSignal.MinSamples; i++)
        {
            histogram.Record(TimeSpan.Zero);
        }

        Assert.Null(ForegroundSignal.P99(histogram));
    }

    private sealed class ManualClock : TimeProvider
    {
        private long _ticks;

        public override long TimestampFrequency => TimeSpan.TicksPerSecond;

        public override long GetTimestamp() => Interlocked.Read(ref _ticks);

        public void Advance(TimeSpan by) => Interlocked.Add(ref _ticks, by.Ticks);
    }
}
