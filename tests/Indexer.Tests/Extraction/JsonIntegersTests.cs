using System.Text;

namespace Indexing.Indexer.Tests;

public sealed class JsonIntegersTests
{
    [Theory]
    [InlineData("0", 0L)]
    [InlineData("-0", 0L)]
    [InlineData("-0.0e-5", 0L)]
    [InlineData("0e99999999999999999999", 0L)]
    [InlineData("1e3", 1000L)]
    [InlineData("1E+3", 1000L)]
    [InlineData("1000.0", 1000L)]
    [InlineData("10000e-1", 1000L)]
    [InlineData("0.1e1", 1L)]
    [InlineData("-12.50e1", -125L)]
    [InlineData("9223372036854775807", long.MaxValue)]
    [InlineData("-9223372036854775808", long.MinValue)]
    [InlineData("9223372036854775807.000", long.MaxValue)]
    [InlineData("92233720368547758.07e2", long.MaxValue)]
    [InlineData("0.0000000000000000000000000000000000000000001e43", 1L)]
    // Above 2^53, where a detour through double would round to ...992.
    [InlineData("9007199254740993.0", 9007199254740993L)]
    public void Parse_WholeNumberInRange_GivesItsExactValue(string number, long expected)
    {
        Assert.Equal(IntegralResult.Integral, JsonIntegers.Parse(Encoding.ASCII.GetBytes(number), out var value));

        Assert.Equal(expected, value);
    }

    [Theory]
    [InlineData("1.5")]
    [InlineData("0.1")]
    [InlineData("1e-1")]
    [InlineData("123e-3")]
    [InlineData("1.0000000000000000000000001")]
    [InlineData("1e-99999999999999999999")]
    [InlineData("9223372036854775807.5")]
    public void Parse_NotWhole_IsFractional(string number)
    {
        Assert.Equal(IntegralResult.Fractional, JsonIntegers.Parse(Encoding.ASCII.GetBytes(number), out _));
    }

    [Theory]
    [InlineData("9223372036854775808")]
    [InlineData("-9223372036854775809")]
    [InlineData("1e19")]
    [InlineData("1e400")]
    [InlineData("100000000000000000000")]
    [InlineData("1e99999999999999999999")]
    public void Parse_WholeButBeyondLong_IsOutOfRange(string number)
    {
        Assert.Equal(IntegralResult.OutOfRange, JsonIntegers.Parse(Encoding.ASCII.GetBytes(number), out _));
    }
}
