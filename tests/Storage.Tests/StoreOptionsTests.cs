using Microsoft.Extensions.Options;

namespace Indexing.Storage.Tests;

public sealed class StoreOptionsTests
{
    [Fact]
    public void Constructor_NoArguments_UsesDocumentedDefaults()
    {
        var options = new StoreOptions();

        Assert.Equal(64L << 20, options.MaxDocumentBytes);
        Assert.True(options.SyncWrites);
        Assert.Equal(256L << 20, options.BlockCacheBytes);
        Assert.False(options.DirectReads);
    }

    [Fact]
    public void Default_IsTheParameterlessInstance()
    {
        Assert.Equal(new StoreOptions().ToString(), StoreOptions.Default.ToString());
    }

    [Fact]
    public void Constructor_EachValueOutOfRange_MessageNamesTheSettingByItsPathInTheEnginesTree()
    {
        // Storage:MaxDocumentBytes and so on: the path in EngineOptions, which is also the server's configuration key.
        Action[] bad =
        [
            () => Validate(new StoreOptions(maxDocumentBytes: 1)),
            () => Validate(new StoreOptions(blockCacheBytes: 1)),
            () => Validate(new StoreOptions(rowCacheBytes: 1)),
            () => Validate(new StoreOptions(tombstonePurgeInterval: TimeSpan.Zero)),
            () => Validate(new StoreOptions(nativeLibrary: "tcmalloc")),
        ];
        foreach (var construct in bad)
        {
            var error = Assert.Throws<OptionsValidationException>(construct);
            Assert.Contains("Storage:", error.Message, StringComparison.Ordinal);
            Assert.DoesNotContain("StoreOptions.", error.Message, StringComparison.Ordinal);
        }
    }

    [Theory]
    [InlineData(1024L)]
    [InlineData(1L << 30)]
    public void Constructor_MaxDocumentBytesAtBounds_IsAccepted(long value)
    {
        Assert.Equal(value, Validate(new StoreOptions(maxDocumentBytes: value)).MaxDocumentBytes);
    }

    [Theory]
    [InlineData(0L, "0 B")]
    [InlineData(-1L, "-1 B")]
    [InlineData(1023L, "1023 B")]
    [InlineData((1L << 30) + 1, "1.0 GiB (1,073,741,825 B)")]
    public void Constructor_MaxDocumentBytesOutOfRange_ThrowsNamingSettingValueAndRange(long value, string shown)
    {
        var error = Assert.Throws<OptionsValidationException>(() => Validate(new StoreOptions(maxDocumentBytes: value)));

        Assert.Contains("Storage:MaxDocumentBytes is " + shown, error.Message, StringComparison.Ordinal);
        Assert.Contains("from 1 KiB to 1 GiB", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(1L << 20)]
    [InlineData(1L << 40)]
    public void Constructor_BlockCacheBytesZeroOrInRange_IsAccepted(long value)
    {
        Assert.Equal(value, Validate(new StoreOptions(blockCacheBytes: value)).BlockCacheBytes);
    }

    [Theory]
    [InlineData(-1L)]
    [InlineData(256L)]
    [InlineData((1L << 20) - 1)]
    [InlineData((1L << 40) + (1L << 30))]
    public void Constructor_BlockCacheBytesOutOfRange_ThrowsNamingSettingValueAndRange(long value)
    {
        var error = Assert.Throws<OptionsValidationException>(() => Validate(new StoreOptions(blockCacheBytes: value)));

        Assert.Contains("Storage:BlockCacheBytes is " + ByteSize.FormatExact(value), error.Message, StringComparison.Ordinal);
        Assert.Contains("0 (no block cache) or from 1 MiB to 1 TiB", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(1)]
    [InlineData((1L << 20) - 1)]
    [InlineData((1L << 40) + 1)]
    [InlineData(-1)]
    public void Constructor_RowCacheOutOfRange_ThrowsNamingTheSettingAndRange(long value)
    {
        var error = Assert.Throws<OptionsValidationException>(() => Validate(new StoreOptions(rowCacheBytes: value)));

        Assert.Contains("Storage:RowCacheBytes is " + ByteSize.FormatExact(value), error.Message, StringComparison.Ordinal);
        Assert.Contains("0 (no row cache) or from 1 MiB to 1 TiB", error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1L << 20)]
    [InlineData(1L << 40)]
    public void Constructor_RowCacheAtBounds_IsAccepted(long value) =>
        Assert.Equal(value, Validate(new StoreOptions(rowCacheBytes: value)).RowCacheBytes);

    [Fact]
    public void Constructor_UnknownNativeLibrary_Throws() =>
        Assert.Contains("Storage:NativeLibrary is 'jemalloc2'; it must be glibc (librocksdb.so, the default) or jemalloc", Assert.Throws<OptionsValidationException>(() => Validate(new StoreOptions(nativeLibrary: "jemalloc2"))).Message, StringComparison.Ordinal);

    [Fact]
    public void ToString_Defaults_ListsEffectiveConfiguration()
    {
        Assert.Equal(
            "MaxDocumentBytes=64 MiB, SyncWrites=true, BlockCacheBytes=256 MiB, RowCacheBytes=64 MiB, DirectReads=false, TombstonePurgeInterval=1 s, NativeLibrary=glibc",
            new StoreOptions().ToString());
    }

    [Fact]
    public void ToString_CustomValues_ShowsExactBytesAndDisabledCache()
    {
        var options = new StoreOptions(
            maxDocumentBytes: 1_000_000, syncWrites: false, blockCacheBytes: 0, directReads: true, tombstonePurgeInterval: TimeSpan.FromMilliseconds(250),
            rowCacheBytes: 32L << 20, nativeLibrary: "Jemalloc");

        Assert.Equal(
            "MaxDocumentBytes=976.6 KiB (1,000,000 B), SyncWrites=false, BlockCacheBytes=0 B (none), RowCacheBytes=32 MiB, DirectReads=true, TombstonePurgeInterval=250 ms, NativeLibrary=jemalloc",
            options.ToString());
    }

    [Theory]
    [InlineData(10)]
    [InlineData(3_600_000)]
    public void Constructor_TombstonePurgeIntervalAtBounds_IsAccepted(int milliseconds)
    {
        var interval = TimeSpan.FromMilliseconds(milliseconds);

        Assert.Equal(interval, Validate(new StoreOptions(tombstonePurgeInterval: interval)).TombstonePurgeInterval);
    }

    [Theory]
    [InlineData(0, "0 ms")]
    [InlineData(-1000, "-1000 ms")]
    [InlineData(9, "9 ms")]
    [InlineData(3_600_001, "3600.001 s")]
    public void Constructor_TombstonePurgeIntervalOutOfRange_ThrowsNamingSettingValueAndRange(int milliseconds, string shown)
    {
        var interval = TimeSpan.FromMilliseconds(milliseconds);

        var error = Assert.Throws<OptionsValidationException>(() => Validate(new StoreOptions(tombstonePurgeInterval: interval)));

        Assert.Contains($"Storage:TombstonePurgeInterval is {shown}; it must be from 10 ms to 3600 s.", error.Message, StringComparison.Ordinal);
        Assert.Contains("default of 1 s", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Open_InvalidOptions_RefusedNamingEveryProblemBeforeAnythingIsCreated()
    {
        var path = Path.Combine(Path.GetTempPath(), $"store-options-{Guid.NewGuid():N}");

        var error = Assert.Throws<OptionsValidationException>(() => DocumentStore.Open(path, new StoreOptions(maxDocumentBytes: 1, blockCacheBytes: 1)));

        Assert.Equal(typeof(StoreOptions), error.OptionsType);
        Assert.Equal(2, error.Failures.Count());
        Assert.Contains("Storage:MaxDocumentBytes is 1 B", error.Message, StringComparison.Ordinal);
        Assert.Contains("Storage:BlockCacheBytes is 1 B", error.Message, StringComparison.Ordinal);
        Assert.False(Directory.Exists(path));
    }

    private static StoreOptions Validate(StoreOptions options) => OptionProblems.ThrowIfInvalid(new StoreOptionsValidator(), options);
}
