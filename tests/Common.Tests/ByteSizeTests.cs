namespace Indexing.Common.Tests;

public sealed class ByteSizeTests
{
    [Theory]
    [InlineData(0L, "0 B")]
    [InlineData(512L, "512 B")]
    [InlineData(1023L, "1023 B")]
    [InlineData(1024L, "1 KiB")]
    [InlineData(4096L, "4 KiB")]
    [InlineData(4097L, "4.0 KiB")]
    [InlineData(1536L, "1.5 KiB")]
    [InlineData(73_610_035L, "70.2 MiB")]
    [InlineData(64L << 20, "64 MiB")]
    [InlineData(3L << 29, "1.5 GiB")]
    [InlineData(1_048_575L, "1.0 MiB")]
    [InlineData(long.MaxValue, "8.0 EiB")]
    [InlineData(-2048L, "-2 KiB")]
    [InlineData(long.MinValue, "-8 EiB")]
    public void Format_ByteCount_UsesBinaryUnits(long bytes, string expected)
    {
        Assert.Equal(expected, ByteSize.Format(bytes));
    }

    [Theory]
    [InlineData(64L << 20, "64 MiB")]
    [InlineData((64L << 20) + 1, "64.0 MiB (67,108,865 B)")]
    [InlineData(100L, "100 B")]
    public void FormatExact_RoundedText_AddsByteCount(long bytes, string expected)
    {
        Assert.Equal(expected, ByteSize.FormatExact(bytes));
    }

    [Theory]
    [InlineData("1048576", 1048576L)]
    [InlineData("512 KiB", 524288L)]
    [InlineData("64MiB", 67108864L)]
    [InlineData("1.5 GiB", 1610612736L)]
    [InlineData("300 MB", 300000000L)]
    [InlineData(" 2g ", 2147483648L)]
    [InlineData("0", 0L)]
    public void TryParse_SizesAsWritten_ParsesToBytes(string text, long expected)
    {
        Assert.True(ByteSize.TryParse(text, out var bytes));
        Assert.Equal(expected, bytes);
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("MiB")]
    [InlineData("-5 MiB")]
    [InlineData("12 parsecs")]
    [InlineData("1.2.3 KiB")]
    [InlineData("99999999999 TiB")]
    public void TryParse_NotASize_ReturnsFalse(string? text)
    {
        Assert.False(ByteSize.TryParse(text, out _));
    }
}
