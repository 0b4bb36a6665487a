namespace Indexing.Prefetcher.Tests;

public sealed class WindowedExtremumTests
{
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(10);

    private static TimeSpan Seconds(double value) => TimeSpan.FromSeconds(value);

    [Theory]
    [InlineData(true, 5, 3)]
    [InlineData(false, 1, 4)]
    public void Current_SampleReachesTheWindowEdge_AgesOutExactlyThere(bool maximum, double extreme, double other)
    {
        var filter = maximum ? WindowedExtremum.Max(Window) : WindowedExtremum.Min(Window);
        filter.Add(Seconds(0), extreme);
        filter.Add(Seconds(1), other);

        Assert.Equal(extreme, filter.Current(Seconds(10) - TimeSpan.FromTicks(1)));
        Assert.Equal(other, filter.Current(Seconds(10)));
        Assert.Equal(other, filter.Current(Seconds(11) - TimeSpan.FromTicks(1)));
        Assert.Null(filter.Current(Seconds(11)));
    }

    [Fact]
    public void Add_NewerEqualValue_ReplacesTheOlderOne()
    {
        var max = WindowedExtremum.Max(Window);
        max.Add(Seconds(0), 5);
        max.Add(Seconds(4), 5);

        Assert.Equal(1, max.RetainedCount);
        Assert.Equal(5, max.Current(Seconds(12)));
    }

    [Fact]
    public void Add_OutOfTimeOrder_Throws()
    {
        var min = WindowedExtremum.Min(Window);
        min.Add(Seconds(5), 1);

        Assert.Throws<ArgumentOutOfRangeException>(() => min.Add(Seconds(4), 1));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(42)]
    [InlineData(1234)]
    public void Current_RandomSequences_MatchesBruteForce(int seed)
    {
        var random = new Random(seed);
        var window = TimeSpan.FromMilliseconds(random.Next(50, 2000));
        var max = WindowedExtremum.Max(window);
        var min = WindowedExtremum.Min(window);
        var samples = new List<(TimeSpan At, double Value)>();
        var now = TimeSpan.Zero;
        for (var i = 0; i < 2000; i++)
        {
            // Steps of 0 (same instant) to well past the window; few distinct values, so ties happen.
            now += TimeSpan.FromMilliseconds(random.Next(4) == 0 ? 0 : random.Next(0, 300));
            if (random.Next(3) > 0)
            {
                var value = random.Next(20) - 5;
                samples.Add((now, value));
                max.Add(now, value);
                min.Add(now, value);
            }
            var live = samples.Where(s => now - s.At < window).Select(s => s.Value).ToList();
            Assert.Equal(live.Count == 0 ? null : live.Max(), max.Current(now));
            Assert.Equal(live.Count == 0 ? null : live.Min(), min.Current(now));
            Assert.True(max.RetainedCount <= live.Count);
        }
    }
}
