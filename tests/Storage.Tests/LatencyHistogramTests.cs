using System.Diagnostics;

namespace Indexing.Storage.Tests;

public sealed class LatencyHistogramTests
{
    private static readonly TimeSpan _oneSecond = TimeSpan.FromSeconds(1);

    private readonly ManualTimeProvider _time = new();
    private readonly LatencyHistogram _histogram;

    public LatencyHistogramTests()
    {
        _histogram = new LatencyHistogram(_time);
    }

    [Fact]
    public void Snapshot_NothingRecorded_IsEmpty()
    {
        Assert.Equal(default, _histogram.Snapshot(LatencyHistogram.MaxWindow));
    }

    [Fact]
    public void Snapshot_UniformOneToThousandMicros_PercentilesWithinBucketWidth()
    {
        for (var micros = 1; micros <= 1000; micros++)
        {
            _histogram.Record(TimeSpan.FromMicroseconds(micros));
        }

        var summary = _histogram.Snapshot(_oneSecond);

        Assert.Equal(1000, summary.Count);
        AssertWithinBucket(500, summary.P50);
        AssertWithinBucket(900, summary.P90);
        AssertWithinBucket(990, summary.P99);
        Assert.Equal(TimeSpan.FromMicroseconds(1000), summary.Max);
    }

    [Fact]
    public void Snapshot_FastReadsWithSlowTail_P99FindsTailAndIsClampedToMax()
    {
        RecordRepeatedly(980, TimeSpan.FromMicroseconds(100));
        RecordRepeatedly(20, TimeSpan.FromMilliseconds(50));

        var summary = _histogram.Snapshot(_oneSecond);

        AssertWithinBucket(100, summary.P50);
        AssertWithinBucket(100, summary.P90);
        Assert.Equal(TimeSpan.FromMilliseconds(50), summary.P99);
        Assert.Equal(TimeSpan.FromMilliseconds(50), summary.Max);
    }

    [Fact]
    public void Snapshot_FewMicrosecondLatencies_ReportsThemExactly()
    {
        // Block-cache Gets: a rounding of 1 us here would double the median and flip a 1.3x target.
        RecordRepeatedly(150, TimeSpan.FromMicroseconds(1));
        RecordRepeatedly(100, TimeSpan.FromMicroseconds(10));
        _histogram.Record(TimeSpan.FromMilliseconds(1));

        var summary = _histogram.Snapshot(_oneSecond);

        Assert.Equal(TimeSpan.FromMicroseconds(1), summary.P50);
        AssertWithinBucket(10, summary.P90);
        AssertWithinBucket(10, summary.P99);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(1L)]
    [InlineData(25L)]
    [InlineData(63L)]
    public void Snapshot_BelowSixPointFourMicros_PercentilesAreExact(long ticks)
    {
        var latency = TimeSpan.FromTicks(ticks);
        _histogram.Record(latency);
        _histogram.Record(latency);
        _histogram.Record(TimeSpan.FromMilliseconds(5));

        var summary = _histogram.Snapshot(_oneSecond);

        Assert.Equal(latency, summary.P50);
    }

    [Fact]
    public void Snapshot_OneRepeatedValue_AllPercentilesAreThatValue()
    {
        var latency = TimeSpan.FromTicks(51_234);
        RecordRepeatedly(3, latency);

        Assert.Equal(new LatencySummary(3, latency, latency, latency, latency), _histogram.Snapshot(_oneSecond));
    }

    [Fact]
    public void Record_NegativeAndBeyondTopBucket_CountedAsZeroAndExactMax()
    {
        _histogram.Record(TimeSpan.FromTicks(-5));
        _histogram.Record(TimeSpan.FromMinutes(5));

        var summary = _histogram.Snapshot(_oneSecond);

        Assert.Equal(2, summary.Count);
        Assert.InRange(summary.P50, TimeSpan.Zero, TimeSpan.FromMicroseconds(1));
        Assert.InRange(summary.P99, TimeSpan.FromSeconds(60), TimeSpan.FromMinutes(5));
        Assert.Equal(TimeSpan.FromMinutes(5), summary.Max);
    }

    [Fact]
    public void RecordTicks_StopwatchTicks_ConvertedToElapsedTime()
    {
        _histogram.RecordTicks(Stopwatch.Frequency / 500);

        var max = _histogram.Snapshot(_oneSecond).Max;

        Assert.InRange(max.Ticks, TimeSpan.FromMilliseconds(2).Ticks - 1, TimeSpan.FromMilliseconds(2).Ticks + 1);
    }

    [Fact]
    public void Snapshot_Window_ExcludesOlderSeconds()
    {
        _histogram.Record(TimeSpan.FromMilliseconds(10));
        _time.Advance(TimeSpan.FromSeconds(5));
        _histogram.Record(TimeSpan.FromMilliseconds(1));

        Assert.Equal(new LatencySummary(1, TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(1), TimeSpan.FromMilliseconds(1)),
            _histogram.Snapshot(TimeSpan.FromSeconds(5)));
        Assert.Equal(2, _histogram.Snapshot(TimeSpan.FromSeconds(6)).Count);
        Assert.Equal(TimeSpan.FromMilliseconds(10), _histogram.Snapshot(TimeSpan.FromSeconds(6)).Max);
    }

    [Fact]
    public void Snapshot_PartialSecondWindow_RoundsUpToWholeSeconds()
    {
        _histogram.Record(TimeSpan.FromMilliseconds(3));
        _time.Advance(TimeSpan.FromSeconds(1));

        Assert.Equal(0, _histogram.Snapshot(_oneSecond).Count);
        Assert.Equal(1, _histogram.Snapshot(TimeSpan.FromMilliseconds(1500)).Count);
    }

    [Theory]
    [InlineData(64)]
    [InlineData(128)]
    [InlineData(1000)]
    public void Record_AfterRingWraps_OldCountsDoNotLeak(int secondsLater)
    {
        RecordRepeatedly(100, TimeSpan.FromMilliseconds(10));

        _time.Advance(TimeSpan.FromSeconds(secondsLater));
        _histogram.Record(TimeSpan.FromMilliseconds(1));

        var summary = _histogram.Snapshot(LatencyHistogram.MaxWindow);
        Assert.Equal(1, summary.Count);
        Assert.Equal(TimeSpan.FromMilliseconds(1), summary.Max);
        Assert.Equal(TimeSpan.FromMilliseconds(1), summary.P99);
    }

    [Fact]
    public void Snapshot_LongAfterLastRecord_IsEmpty()
    {
        _histogram.Record(TimeSpan.FromMilliseconds(10));
        _time.Advance(TimeSpan.FromSeconds(200));

        Assert.Equal(default, _histogram.Snapshot(LatencyHistogram.MaxWindow));
    }

    [Fact]
    public void Snapshot_EverySecondOfFullWindow_CountsAllSixty()
    {
        for (var second = 0; second < 60; second++)
        {
            _histogram.Record(TimeSpan.FromMilliseconds(second + 1));
            _time.Advance(_oneSecond);
        }

        _time.Advance(TimeSpan.FromTicks(-1));
        var summary = _histogram.Snapshot(LatencyHistogram.MaxWindow);

        Assert.Equal(60, summary.Count);
        Assert.Equal(TimeSpan.FromMilliseconds(60), summary.Max);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-1L)]
    [InlineData(61L)]
    public void Snapshot_WindowOutOfRange_Throws(long seconds)
    {
        var thrown = Assert.Throws<ArgumentOutOfRangeException>(() => _histogram.Snapshot(TimeSpan.FromSeconds(seconds)));

        Assert.Equal("window", thrown.ParamName);
        Assert.Contains("at most 60 s", thrown.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Record_FourThreadsConcurrently_CountsEveryRecord()
    {
        const int Threads = 4;
        const int PerThread = 100_000;
        using var start = new Barrier(Threads);
        var workers = Enumerable.Range(0, Threads)
            .Select(worker => new Thread(() =>
            {
                start.SignalAndWait();
                for (var i = 0; i < PerThread; i++)
                {
                    _histogram.Record(TimeSpan.FromTicks(10 + (i % 5000) + worker));
                }
            }))
            .ToList();

        workers.ForEach(thread => thread.Start());
        workers.ForEach(thread => thread.Join());

        var summary = _histogram.Snapshot(_oneSecond);
        Assert.Equal(Threads * PerThread, summary.Count);
        Assert.Equal(TimeSpan.FromTicks(10 + 4999 + Threads - 1), summary.Max);
    }

    [Fact]
    public void BucketIndex_SixtySecondsAndAbove_IsTopBucket()
    {
        var top = LatencyHistogram.BucketCount - 1;
        var sixtySeconds = TimeSpan.FromSeconds(60).Ticks;

        Assert.Equal(top, LatencyHistogram.BucketIndex(sixtySeconds));
        Assert.Equal(top, LatencyHistogram.BucketIndex(long.MaxValue));
        Assert.True(LatencyHistogram.BucketLimitTicks(top) > sixtySeconds);
    }

    private void RecordRepeatedly(int count, TimeSpan latency)
    {
        for (var i = 0; i < count; i++)
        {
            _histogram.Record(latency);
        }
    }

    // Reported percentiles are the largest value of their bucket: never below the true value,
    // and less than 1/32 of it above (exact where buckets are one tick wide).
    private static void AssertWithinBucket(long expectedMicros, TimeSpan actual)
    {
        var low = TimeSpan.FromMicroseconds(expectedMicros);
        var high = TimeSpan.FromTicks(low.Ticks + (low.Ticks / 32));
        Assert.InRange(actual, low, high);
    }
}
