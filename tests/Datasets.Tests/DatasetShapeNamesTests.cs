namespace Indexing.Datasets.Tests;

public sealed class DatasetShapeNamesTests
{
    [Theory]
    [InlineData("uniform", DatasetShape.Uniform)]
    [InlineData("lognormal", DatasetShape.LogNormal)]
    [InlineData("growing", DatasetShape.Growing)]
    [InlineData("rare-giants", DatasetShape.RareGiants)]
    public void ParseAndToName_CliName_RoundTrip(string name, DatasetShape shape)
    {
        Assert.Equal(shape, DatasetShapeNames.Parse(name));
        Assert.Equal(name, shape.ToName());
    }

    [Fact]
    public void Parse_OtherCaseAndSpaces_Accepted()
    {
        Assert.Equal(DatasetShape.RareGiants, DatasetShapeNames.Parse("  Rare-Giants "));
    }

    [Theory]
    [InlineData("huge")]
    [InlineData("rare_giants")]
    [InlineData("")]
    public void Parse_UnknownName_ErrorNamesValueAndListsAllowed(string name)
    {
        var error = Assert.Throws<ArgumentException>(() => DatasetShapeNames.Parse(name));
        Assert.Contains($"'{name}'", error.Message, StringComparison.Ordinal);
        Assert.Contains("uniform, lognormal, growing, rare-giants", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void TryParse_Null_ReturnsFalse()
    {
        Assert.False(DatasetShapeNames.TryParse(null, out _));
    }

    [Fact]
    public void ToName_UndefinedValue_Throws()
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => ((DatasetShape)99).ToName());
        Assert.Contains("99", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void All_EveryShape_HasAName()
    {
        Assert.Equal(Enum.GetValues<DatasetShape>().Length, DatasetShapeNames.All.Count);
        Assert.Equal(DatasetShapeNames.All, Enum.GetValues<DatasetShape>().Select(s => s.ToName()));
    }
}
