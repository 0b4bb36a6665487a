using System.Text;

namespace Indexing.Prefetcher.Tests;

public sealed class Utf8KeyOrderTests
{
    [Fact]
    public void Compare_RandomStringsAcrossTheSurrogateBoundary_MatchesUtf8ByteOrder()
    {
        // Units chosen around the places UTF-16 and UTF-8 orders could disagree.
        string[] pieces = ["a", "b", "z", "\u00E9", "\u07FF", "\u0800", "\uD7FF", "\uE000", "\uF8FF", "\uFFFD", "\uFFFF", "\U00010000", "\U0001F600", "\U0010FFFF"];
        var random = new Random(5);
        var builder = new StringBuilder();
        string Next()
        {
            builder.Clear();
            for (var i = random.Next(0, 4); i >= 0; i--)
            {
                builder.Append(pieces[random.Next(pieces.Length)]);
            }

            return builder.ToString();
        }

        for (var i = 0; i < 20_000; i++)
        {
            var left = Next();
            var right = Next();
            var expected = Encoding.UTF8.GetBytes(left).AsSpan().SequenceCompareTo(Encoding.UTF8.GetBytes(right));

            Assert.Equal(Math.Sign(expected), Math.Sign(Utf8KeyOrder.Compare(left, right)));
        }
    }

    [Theory]
    [InlineData("", "a")]
    [InlineData("ab", "abc")]
    [InlineData("\uFFFF", "\U00010000")]
    public void Compare_FirstBeforeSecond_IsNegativeAndAntisymmetric(string first, string second)
    {
        Assert.True(Utf8KeyOrder.Compare(first, second) < 0);
        Assert.True(Utf8KeyOrder.Compare(second, first) > 0);
        Assert.Equal(0, Utf8KeyOrder.Compare(first, first));
    }
}
