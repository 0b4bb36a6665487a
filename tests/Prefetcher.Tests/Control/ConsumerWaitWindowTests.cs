namespace Indexing.Prefetcher.Tests;

public sealed class ConsumerWaitWindowTests
{
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(250);

    [Fact]
    public void WaitFraction_NoTickYet_IsZero()
    {
        Assert.Equal(0, new ConsumerWaitWindow(TimeSpan.FromSeconds(1)).WaitFraction);
    }

    [Fact]
    public void WaitFraction_TicksLeaveTheWindow_OnlyRecentOnesCount()
    {
        var window = new ConsumerWaitWindow(TimeSpan.FromSeconds(1));
        var now = TimeSpan.Zero;
        for (var i = 0; i < 4; i++)
        {
            window.Observe(now += Tick, Tick, 1);
        }
        Assert.Equal(1, window.WaitFraction);

        window.Observe(now += Tick, Tick, 0);
        window.Observe(now += Tick, Tick, 0);

        Assert.Equal(0.5, window.WaitFraction, precision: 9);
        Assert.Equal(TimeSpan.FromSeconds(1), window.Duration);
    }

    [Fact]
    public void Observe_TickLongerThanTheWindow_KeepsTheCurrentOne()
    {
        var window = new ConsumerWaitWindow(TimeSpan.FromSeconds(1));
        window.Observe(TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1), 0);

        window.Observe(TimeSpan.FromSeconds(4), TimeSpan.FromSeconds(3), 0.25);

        Assert.Equal(0.25, window.WaitFraction, precision: 9);
        Assert.Equal(TimeSpan.FromSeconds(3), window.Duration);
    }
}
