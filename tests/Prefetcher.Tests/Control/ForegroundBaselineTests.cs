namespace Indexing.Prefetcher.Tests;

public sealed class ForegroundBaselineTests
{
    private static TimeSpan Ms(double value) => TimeSpan.FromMilliseconds(value);

    private static TimeSpan Seconds(double value) => TimeSpan.FromSeconds(value);

    [Fact]
    public void Target_ThreeSamples_IsTheFactorTimesTheirMedian()
    {
        var baseline = new ForegroundBaseline(new ControllerOptions());
        baseline.Observe(Seconds(1), Ms(2));
        baseline.Observe(Seconds(2), Ms(2));
        Assert.Equal(TimeSpan.MaxValue, baseline.Target(Seconds(2)));

        baseline.Observe(Seconds(3), Ms(2));

        Assert.Equal(Ms(2.6), baseline.Target(Seconds(3)));
        Assert.True(baseline.IsOver(Seconds(3), Ms(2.7), out var p99, out var target));
        Assert.Equal((Ms(2.7), Ms(2.6)), (p99, target));
        Assert.False(baseline.IsOver(Seconds(3), null, out _, out _));
    }

    [Fact]
    public void Target_OneUnusuallyLowSample_DoesNotTightenIt()
    {
        var baseline = new ForegroundBaseline(new ControllerOptions());
        var at = 0;
        foreach (var p99 in new[] { 2.0, 2.0, 0.5, 2.0 })
        {
            baseline.Observe(Seconds(++at), Ms(p99));
        }

        Assert.Equal(Ms(2.6), baseline.Target(Seconds(at)));
    }

    [Fact]
    public void Target_LowFirstSample_DoesNotBecomeTheBaseline()
    {
        var baseline = new ForegroundBaseline(new ControllerOptions());
        baseline.Observe(Seconds(1), Ms(0.5));
        for (var at = 2; at <= 10; at++)
        {
            baseline.Observe(Seconds(at), Ms(2));
        }

        Assert.Equal(Ms(2.6), baseline.Target(Seconds(10)));
    }

    [Fact]
    public void Target_ExplicitTarget_ReplacesTheLearnedOne()
    {
        var baseline = new ForegroundBaseline(new ControllerOptions { ForegroundTarget = Ms(10) });

        Assert.Equal(Ms(10), baseline.Target(Seconds(0)));
        Assert.True(baseline.IsOver(Seconds(0), Ms(11), out _, out _));
    }

    [Fact]
    public void Target_SamplesOlderThanTheWindow_AreForgotten()
    {
        var options = new ControllerOptions { ForegroundBaselineWindow = Seconds(10) };
        var baseline = new ForegroundBaseline(options);
        for (var at = 1; at <= 3; at++)
        {
            baseline.Observe(Seconds(at), Ms(1));
        }
        for (var at = 4; at <= 20; at++)
        {
            baseline.Observe(Seconds(at), Ms(3));
        }

        Assert.Equal(Ms(3.9), baseline.Target(Seconds(20)));
    }
}
