namespace Indexing.Indexer.Tests.Index;

// The bulk commit cadence as a pure function of the build's total and done bytes, its elapsed time
// and the last commit's duration: min(cap, max(floor, share x estimated duration)).
public sealed class BulkCommitCadenceTests
{
    private const long MiB = 1L << 20;
    private const long GiB = 1L << 30;
    private static readonly TimeSpan Cap = IndexOptions.DefaultBulkCommitInterval;
    private static readonly TimeSpan Floor = BulkCommitCadence.MinimumInterval;
    private static readonly BulkCommitCadence Default = new(IndexOptions.DefaultBulkCommitShare, Cap);

    [Fact]
    public void Interval_TheMeasuredResumeCase_IsFivePercentOfTheBuild()
    {
        // The 1 GiB rebuild of 44 s, at 40% after 17.6 s: 5% of 44 s, where the fixed cadence waited 10 s.
        var interval = Default.Interval(GiB, (long)(0.4 * GiB), TimeSpan.FromSeconds(17.6), lastCommit: TimeSpan.FromMilliseconds(150));

        Assert.Equal(2.2, interval.TotalSeconds, precision: 6);
    }

    [Theory]
    [InlineData(0L, 0.0)] // nothing done, no time: no rate
    [InlineData(0L, 30.0)] // time passed, nothing done: a zero rate
    [InlineData(5L, 0.0)] // bytes but no time
    public void Interval_NoRateYet_IsTheFloor(long doneMiB, double elapsedSeconds)
    {
        Assert.Equal(Floor, Default.Interval(GiB, doneMiB * MiB, TimeSpan.FromSeconds(elapsedSeconds), TimeSpan.Zero));
        Assert.Equal(Floor, Default.Interval(0, doneMiB * MiB, TimeSpan.FromSeconds(elapsedSeconds), TimeSpan.Zero));
    }

    [Theory]
    [InlineData(40.0, 2.0)] // 5% of 40 s done so far
    [InlineData(100.0, 5.0)]
    [InlineData(10.0, 1.0)] // 0.5 s: the floor
    [InlineData(1000.0, 10.0)] // 50 s: the cap
    public void Interval_UnknownTotal_IsTheShareOfTheTimeSoFar(double elapsedSeconds, double expectedSeconds)
    {
        // No total (0), or a planned total still below what was done (the metadata scan runs on): the
        // bytes done stand in for it, so the wait grows with the build.
        Assert.Equal(expectedSeconds, Default.Interval(0, 300 * MiB, TimeSpan.FromSeconds(elapsedSeconds), TimeSpan.Zero).TotalSeconds, precision: 6);
        Assert.Equal(expectedSeconds, Default.Interval(100 * MiB, 300 * MiB, TimeSpan.FromSeconds(elapsedSeconds), TimeSpan.Zero).TotalSeconds, precision: 6);
    }

    [Fact]
    public void Interval_PartialTotalWhilePlanning_IsNoLongerThanWithTheWholeTotal()
    {
        // A quarter done after 40 s: half of the total planned so far says 80 s, the whole 160 s.
        var planning = Default.Interval(512 * MiB, 256 * MiB, TimeSpan.FromSeconds(40), TimeSpan.Zero);
        var planned = Default.Interval(GiB, 256 * MiB, TimeSpan.FromSeconds(40), TimeSpan.Zero);

        Assert.Equal(4, planning.TotalSeconds, precision: 6);
        Assert.Equal(8, planned.TotalSeconds, precision: 6);
    }

    [Fact]
    public void Interval_TinyBuild_IsTheFloor()
    {
        // 10 MiB at 20 MiB/s: a build of half a second; 5% of it would be 25 ms of commits back to back.
        Assert.Equal(Floor, Default.Interval(10 * MiB, 2 * MiB, TimeSpan.FromSeconds(0.1), TimeSpan.Zero));
    }

    [Theory]
    [InlineData(10L * 1024 * GiB, 1L, 1.0)] // 10 TiB, one byte done after a second
    [InlineData(long.MaxValue, 1L, 1.0)] // no overflow at the extremes
    [InlineData(long.MaxValue, long.MaxValue, 1e6)]
    public void Interval_HugeBuild_IsTheCap(long totalBytes, long doneBytes, double elapsedSeconds)
    {
        Assert.Equal(Cap, Default.Interval(totalBytes, doneBytes, TimeSpan.FromSeconds(elapsedSeconds), TimeSpan.Zero));
    }

    [Fact]
    public void Interval_SlowCommits_WaitTwiceTheLastCommit()
    {
        // The 44 s build again: a 1 s commit leaves the share's 2.2 s; a 2 s commit makes it 4 s; a 6 s one the cap.
        var atForty = (GiB, (long)(0.4 * GiB), TimeSpan.FromSeconds(17.6));
        Assert.Equal(2.2, Default.Interval(atForty.GiB, atForty.Item2, atForty.Item3, TimeSpan.FromSeconds(1)).TotalSeconds, precision: 6);
        Assert.Equal(TimeSpan.FromSeconds(4), Default.Interval(atForty.GiB, atForty.Item2, atForty.Item3, TimeSpan.FromSeconds(2)));
        Assert.Equal(Cap, Default.Interval(atForty.GiB, atForty.Item2, atForty.Item3, TimeSpan.FromSeconds(6)));
        // No rate yet: the floor, raised by the commit too.
        Assert.Equal(TimeSpan.FromSeconds(3), Default.Interval(0, 0, TimeSpan.Zero, TimeSpan.FromSeconds(1.5)));
    }

    [Theory]
    [InlineData(0L, 0L, 0.0)]
    [InlineData(1024L, 512L, 1.0)]
    [InlineData(1024L, 512L, 3600.0)]
    public void Interval_CapBelowTheFloor_IsTheCap(long totalMiB, long doneMiB, double elapsedSeconds)
    {
        var cadence = new BulkCommitCadence(IndexOptions.DefaultBulkCommitShare, TimeSpan.FromMilliseconds(100));

        Assert.Equal(TimeSpan.FromMilliseconds(100), cadence.Interval(totalMiB * MiB, doneMiB * MiB, TimeSpan.FromSeconds(elapsedSeconds), TimeSpan.FromSeconds(2)));
    }

    [Fact]
    public void Interval_ShareOne_IsTheCapForABuildLongerThanIt()
    {
        // The fixed cadence the share replaced: every BulkCommitInterval.
        var fixedCadence = new BulkCommitCadence(1, Cap);

        Assert.Equal(Cap, fixedCadence.Interval(GiB, (long)(0.4 * GiB), TimeSpan.FromSeconds(17.6), TimeSpan.Zero));
        Assert.Equal(TimeSpan.FromSeconds(8), fixedCadence.Interval(100 * MiB, 50 * MiB, TimeSpan.FromSeconds(4), TimeSpan.Zero));
    }

    [Theory]
    [InlineData(64L, 3.0)]
    [InlineData(1024L, 44.0)]
    [InlineData(10L * 1024, 440.0)]
    [InlineData(100L * 1024, 4400.0)]
    public void Interval_AnyBuild_LosesAtMostTheShareOrTheFloorAndNeverMoreThanTheCap(long totalMiB, double durationSeconds)
    {
        // At a steady rate, at every tenth of the build.
        for (var tenth = 1; tenth < 10; tenth++)
        {
            var elapsed = TimeSpan.FromSeconds(durationSeconds * tenth / 10);
            var interval = Default.Interval(totalMiB * MiB, totalMiB * MiB * tenth / 10, elapsed, TimeSpan.Zero);

            Assert.InRange(interval, Floor, Cap);
            Assert.True(
                interval <= Floor || interval.TotalSeconds <= IndexOptions.DefaultBulkCommitShare * durationSeconds + 1e-6,
                $"{interval} at {tenth}/10 of a {durationSeconds} s build");
        }
    }
}
