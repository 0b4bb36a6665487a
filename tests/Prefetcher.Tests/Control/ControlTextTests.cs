namespace Indexing.Prefetcher.Tests;

public sealed class ControlTextTests
{
    [Theory]
    [InlineData(1.56, "1.56 ms")]
    [InlineData(4.1, "4.1 ms")]
    [InlineData(4.0, "4.0 ms")]
    [InlineData(107.78, "107.8 ms")]
    [InlineData(1_200, "1.2 s")]
    [InlineData(600_000, "10 min")]
    public void Duration_PicksUnitAndPrecision(double milliseconds, string expected)
    {
        Assert.Equal(expected, ControlText.Duration(TimeSpan.FromMilliseconds(milliseconds)));
    }

    [Theory]
    [InlineData(0.18, "+18%")]
    [InlineData(-0.02, "-2%")]
    [InlineData(0.0, "+0%")]
    [InlineData(-0.004, "+0%")]
    public void Change_AlwaysCarriesASign(double fraction, string expected)
    {
        Assert.Equal(expected, ControlText.Change(fraction));
    }
}
