namespace Indexing.Datasets.Tests;

public sealed class DatasetSpecTests
{
    [Fact]
    public void ToString_CountSpec_DescribesEffectiveSettings()
    {
        var spec = new DatasetSpec(DatasetShape.RareGiants, documentCount: 20_000);

        Assert.Equal("rare-giants, 20000 docs, seed 42, collection orders, max document 32 MiB", spec.ToString());
    }

    [Fact]
    public void ToString_BytesSpec_ShowsTargetAndEstimatedCount()
    {
        var spec = new DatasetSpec(DatasetShape.Uniform, targetTotalBytes: 4L << 20, seed: 7, collection: "items");

        Assert.Equal("uniform, 4 MiB (about 1024 docs), seed 7, collection items, max document 32 MiB", spec.ToString());
    }

    [Fact]
    public void ToString_BothLimits_SaysWhicheverFirst()
    {
        var spec = new DatasetSpec(DatasetShape.Growing, documentCount: 10, targetTotalBytes: 1L << 30);

        Assert.StartsWith("growing, 10 docs or 1 GiB, whichever first, seed 42", spec.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Constructor_NoLimit_ExplainsBothOptions()
    {
        var error = Assert.Throws<ArgumentException>(() => new DatasetSpec(DatasetShape.Uniform));

        Assert.Contains("documentCount", error.Message, StringComparison.Ordinal);
        Assert.Contains("targetTotalBytes", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-5L)]
    [InlineData(DatasetSpec.MaxDocumentCount + 1)]
    public void Constructor_CountOutOfRange_NamesValue(long count)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new DatasetSpec(DatasetShape.Uniform, documentCount: count));

        Assert.Equal("documentCount", error.ParamName);
        Assert.Contains(count.ToString(System.Globalization.CultureInfo.InvariantCulture), error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Constructor_ZeroTargetBytes_Throws()
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(() => new DatasetSpec(DatasetShape.Uniform, targetTotalBytes: 0));

        Assert.Equal("targetTotalBytes", error.ParamName);
    }

    [Theory]
    [InlineData(1023L)]
    [InlineData((1L << 30) + 1)]
    public void Constructor_MaxDocumentBytesOutOfRange_GivesRangeInUnits(long maxDocumentBytes)
    {
        var error = Assert.Throws<ArgumentOutOfRangeException>(
            () => new DatasetSpec(DatasetShape.LogNormal, documentCount: 1, maxDocumentBytes: maxDocumentBytes));

        Assert.Equal("maxDocumentBytes", error.ParamName);
        Assert.Contains("from 1 KiB to 1 GiB", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("")]
    [InlineData("or/ders")]
    [InlineData("orders ")]
    [InlineData("ordérs")]
    public void Constructor_BadCollection_SaysWhatIsAllowed(string collection)
    {
        var error = Assert.Throws<ArgumentException>(() => new DatasetSpec(DatasetShape.Uniform, documentCount: 1, collection: collection));

        Assert.Equal("collection", error.ParamName);
        Assert.Contains($"'{collection}'", error.Message, StringComparison.Ordinal);
        Assert.Contains("letters, digits", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Constructor_UndefinedShape_Throws()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new DatasetSpec((DatasetShape)42, documentCount: 1));
    }

    [Fact]
    public void PlannedDocumentCount_BytesOnly_EstimatedFromShapeMean()
    {
        var spec = new DatasetSpec(DatasetShape.Uniform, targetTotalBytes: 400L * 4096);

        Assert.Equal(400, spec.PlannedDocumentCount);
    }

    [Theory]
    [InlineData(1L, null, 8)]
    [InlineData(123_456_789_012L, null, 12)]
    [InlineData(null, 1_000_000_000_000L, 10)]
    public void IdDigits_LargestPossibleDataset_Fits(long? count, long? bytes, int digits)
    {
        var spec = new DatasetSpec(DatasetShape.Uniform, documentCount: count, targetTotalBytes: bytes);

        Assert.Equal(digits, spec.IdDigits);
    }
}
