namespace Indexing.Indexer.Tests;

public sealed class FieldPathTests
{
    [Theory]
    [InlineData("customer.name", "customer,name")]
    [InlineData("lines[].product", "lines[],product")]
    [InlineData("tags[]", "tags[]")]
    [InlineData("a.b[].c[].d", "a,b[],c[],d")]
    [InlineData("first name", "first name")]
    [InlineData("clé.日本", "clé,日本")]
    [InlineData("$type", "$type")]
    public void TryParse_ValidPath_GivesItsSegments(string text, string expected)
    {
        Assert.True(FieldPath.TryParse(text, out var path, out var error), error);

        Assert.Equal(expected, string.Join(",", path!.Segments.Select(s => s.Name + (s.MarkedArray ? "[]" : ""))));
        Assert.Equal(text, path.Text);
    }

    [Theory]
    [InlineData("", "path is empty")]
    [InlineData("a..b", "empty property name ('..')", 3)]
    [InlineData(".a", "starts with '.'", 1)]
    [InlineData("a.", "ends with '.'", 2)]
    [InlineData("a[", "'[' that is not closed", 2)]
    [InlineData("a[0]", "array indexes such as '[0]' are not supported", 3)]
    [InlineData("a[]b", "has 'b' right after '[]'", 4)]
    [InlineData("a]", "']' without a '['", 2)]
    [InlineData("[]", "no property name before it", 1)]
    [InlineData("a.[].b", "no property name before it", 3)]
    [InlineData("a. b", "starting or ending with whitespace", 3)]
    [InlineData("a .b", "starting or ending with whitespace", 2)]
    [InlineData("a\tb", "control character U+0009", 2)]
    public void TryParse_MalformedPath_NamesTheProblemAndItsPosition(string text, string reason, int position = 0)
    {
        Assert.False(FieldPath.TryParse(text, out var path, out var error));

        Assert.Null(path);
        Assert.Contains(reason, error, StringComparison.Ordinal);
        Assert.Contains("property names joined by '.'", error, StringComparison.Ordinal);
        if (position > 0)
        {
            Assert.Contains($"at character {position};", error, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void TryParse_UnpairedSurrogate_IsRefused()
    {
        // Not in the theory above: xunit does not carry unpaired surrogates through theory data intact.
        Assert.False(FieldPath.TryParse("a\ud800.b", out _, out var error));

        Assert.Contains("unpaired surrogate U+D800", error, StringComparison.Ordinal);
        Assert.Contains("at character 2;", error, StringComparison.Ordinal);
    }

    [Fact]
    public void TryParse_MoreSegmentsThanTheDeepestDocument_IsRefused()
    {
        var deepest = string.Join(".", Enumerable.Repeat("a", FieldPath.MaxSegments));

        Assert.True(FieldPath.TryParse(deepest, out _, out _));
        Assert.False(FieldPath.TryParse(deepest + ".a", out _, out var error));
        Assert.Contains($"more than {FieldPath.MaxSegments} segments", error, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_DefinitionWithBadPath_ReportsFieldPathLocation()
    {
        var problem = Definitions.OnlyFieldProblem("""
            "name": "x", "path": "lines[0].product", "type": "keyword"
            """);

        Assert.Equal("fields[0].path", problem.Location);
        Assert.Contains("path 'lines[0].product'", problem.Message, StringComparison.Ordinal);
        Assert.Contains("at character 7;", problem.Message, StringComparison.Ordinal);
    }
}
