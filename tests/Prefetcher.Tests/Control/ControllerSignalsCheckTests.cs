namespace Indexing.Prefetcher.Tests;

public sealed class ControllerSignalsCheckTests
{
    private static readonly ControllerSignals Valid = new()
    {
        Now = TimeSpan.FromSeconds(1),
        TickDuration = TimeSpan.FromMilliseconds(250),
        Reads = ControllerDriver.Reads(4),
        BudgetBytes = 1 << 30,
    };

    [Fact]
    public void Check_ValidSignals_Pass()
    {
        Valid.Check(lastNow: TimeSpan.FromSeconds(1));
        Valid.Check(lastNow: null);
    }

    [Fact]
    public void Check_TimeGoesBackwards_Throws()
    {
        var error = Assert.Throws<ArgumentException>(() => Valid.Check(lastNow: TimeSpan.FromSeconds(2)));

        Assert.Contains("Now went backwards", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-10L)]
    public void Check_ZeroOrNegativeForegroundP99_ThrowsAskingForNull(long ticks)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => (Valid with { ForegroundP99 = TimeSpan.FromTicks(ticks) }).Check(null));

        Assert.Contains($"ForegroundP99 must be positive (was {TimeSpan.FromTicks(ticks)})", error.Message, StringComparison.Ordinal);
        Assert.Contains("pass null when the window has no samples", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("BytesDelivered")]
    [InlineData("BufferedBytes")]
    [InlineData("LargestRecentDocumentBytes")]
    [InlineData("Reads[].Bytes")]
    [InlineData("Reads[].Documents")]
    [InlineData("Reads[].Latency")]
    public void Check_NegativeValue_ThrowsNamingIt(string name)
    {
        var signals = name switch
        {
            "BytesDelivered" => Valid with { BytesDelivered = -1 },
            "BufferedBytes" => Valid with { BufferedBytes = -1 },
            "LargestRecentDocumentBytes" => Valid with { LargestRecentDocumentBytes = -1 },
            "Reads[].Bytes" => Valid with { Reads = new[] { new ReadSample(-1, 1, TimeSpan.FromMilliseconds(1)) } },
            "Reads[].Documents" => Valid with { Reads = new[] { new ReadSample(1, -1, TimeSpan.FromMilliseconds(1)) } },
            _ => Valid with { Reads = new[] { new ReadSample(1, 1, TimeSpan.FromTicks(-1)) } },
        };

        var error = Assert.Throws<ArgumentOutOfRangeException>(() => signals.Check(null));

        Assert.Contains($"{name} must not be negative", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0, 0.5, "TickDuration must be positive")]
    [InlineData(250, 1.5, "ConsumerWaitFraction must be in [0, 1]")]
    [InlineData(250, -0.1, "ConsumerWaitFraction must be in [0, 1]")]
    public void Check_OutOfRange_Throws(int tickMilliseconds, double waitFraction, string message)
    {
        var signals = Valid with { TickDuration = TimeSpan.FromMilliseconds(tickMilliseconds), ConsumerWaitFraction = waitFraction };

        var error = Assert.Throws<ArgumentException>(() => signals.Check(null));

        Assert.Contains(message, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Check_LiveLimitBelowOne_Throws()
    {
        var error = Assert.Throws<ArgumentException>(() => (Valid with { MaxConcurrency = 0 }).Check(null));

        Assert.Contains("MaxConcurrency must be at least 1 (was 0)", error.Message, StringComparison.Ordinal);
    }
}
