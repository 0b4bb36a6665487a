using Microsoft.Extensions.Options;

namespace Indexing.Indexer.Tests.Index;

public sealed class IndexOptionsTests
{
    [Theory]
    [InlineData(nameof(IndexOptions.CommitEveryBytes), (1L << 20) - 1, "CommitEveryBytes is 1048575; it must be from 1 MiB to 64 GiB.")]
    [InlineData(nameof(IndexOptions.CommitEveryBytes), (64L << 30) + 1, "CommitEveryBytes is 68719476737; it must be from 1 MiB to 64 GiB.")]
    [InlineData(nameof(IndexOptions.TakeMaxBytes), (64L << 10) - 1, "TakeMaxBytes is 65535; it must be from 64 KiB to 1 GiB.")]
    [InlineData(nameof(IndexOptions.TakeMaxBytes), (1L << 30) + 1, "TakeMaxBytes is 1073741825; it must be from 64 KiB to 1 GiB.")]
    [InlineData(nameof(IndexOptions.PrefetchBudgetBytes), (1L << 20) - 1, "PrefetchBudgetBytes is 1048575; it must be from 1 MiB to 64 GiB.")]
    [InlineData(nameof(IndexOptions.PrefetchBudgetBytes), (64L << 30) + 1, "PrefetchBudgetBytes is 68719476737; it must be from 1 MiB to 64 GiB.")]
    [InlineData(nameof(IndexOptions.PrefetchBudgetBytes), 0, "PrefetchBudgetBytes is 0; it must be from 1 MiB to 64 GiB.")]
    public void ByteSetting_OutsideItsRange_IsRefusedNamingTheSettingValueAndRange(string setting, long value, string message)
    {
        var error = Assert.Throws<OptionsValidationException>(() => Validate(WithBytes(setting, value)));

        Assert.Equal(typeof(IndexOptions), error.OptionsType);
        Assert.Equal([$"Indexes:{message}"], error.Failures);
    }

    [Theory]
    [InlineData(nameof(IndexOptions.CommitEveryBytes), 1L << 20)]
    [InlineData(nameof(IndexOptions.CommitEveryBytes), 64L << 30)]
    [InlineData(nameof(IndexOptions.TakeMaxBytes), 64L << 10)]
    [InlineData(nameof(IndexOptions.TakeMaxBytes), 1L << 30)]
    [InlineData(nameof(IndexOptions.PrefetchBudgetBytes), 1L << 20)]
    [InlineData(nameof(IndexOptions.PrefetchBudgetBytes), 64L << 30)]
    public void ByteSetting_AtItsBounds_IsKept(string setting, long value)
    {
        var options = Validate(WithBytes(setting, value));

        Assert.Equal(value, setting switch
        {
            nameof(IndexOptions.CommitEveryBytes) => options.CommitEveryBytes,
            nameof(IndexOptions.TakeMaxBytes) => options.TakeMaxBytes,
            _ => options.PrefetchBudgetBytes,
        });
    }

    [Fact]
    public void PrefetchBudgetBytes_Defaults256MiB_OneForTheEngine_AndIsShown()
    {
        Assert.Equal(256L << 20, new IndexOptions().PrefetchBudgetBytes);
        Assert.Equal(IndexOptions.DefaultPrefetchBudgetBytes, new IndexOptions().PrefetchBudgetBytes);
        Assert.Contains("prefetch budget 256 MiB for all", new IndexOptions().ToString(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0.5)]
    [InlineData(2049)]
    [InlineData(double.NaN)]
    public void BuildRamBuffer_OutsideItsRange_IsRefusedNamingTheSetting(double value)
    {
        var error = Assert.Throws<OptionsValidationException>(() => Validate(new IndexOptions { BuildRamBufferSizeMB = value }));

        Assert.Contains("Indexes:BuildRamBufferSizeMB is ", error.Message, StringComparison.Ordinal);
        Assert.Contains("it must be from 1 to 2048 (MB)", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void BuildRamBuffer_Default_IsLargerThanTheFollowingOne_AndShown()
    {
        var options = new IndexOptions();

        Assert.Equal(IndexOptions.DefaultBuildRamBufferSizeMB, options.BuildRamBufferSizeMB);
        Assert.True(options.BuildRamBufferSizeMB > options.RamBufferSizeMB);
        Assert.Contains("RAM buffer 16 MB (64 MB building)", options.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void Open_InvalidOptions_RefusedBeforeTheDirectoryIsMade()
    {
        var directory = Path.Combine(Path.GetTempPath(), $"index-options-{Guid.NewGuid():N}");

        var error = Assert.Throws<OptionsValidationException>(
            () => DocumentIndex.Open(directory, IndexTestEnvironment.Orders, new IndexOptions { ChangeBatchSize = 0, TakeMaxDocuments = 0 }));

        Assert.Contains("Indexes:ChangeBatchSize is 0; it must be from 1 to 100000 (entries).", error.Message, StringComparison.Ordinal);
        Assert.Contains("Indexes:TakeMaxDocuments is 0", error.Message, StringComparison.Ordinal);
        Assert.False(System.IO.Directory.Exists(directory));
    }

    [Theory]
    [InlineData(0.0)]
    [InlineData(0.005)]
    [InlineData(1.5)]
    [InlineData(double.NaN)]
    public void BulkCommitShare_OutsideItsRange_IsRefusedNamingTheSettingAndRange(double value)
    {
        var error = Assert.Throws<OptionsValidationException>(() => Validate(new IndexOptions { BulkCommitShare = value }));

        Assert.Contains("Indexes:BulkCommitShare is", error.Message, StringComparison.Ordinal);
        Assert.Contains("it must be from 0.01 to 1 (the share of a bulk build's estimated duration between its commits; default 0.05)", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void BulkCommitCadence_Defaults_AreFivePercentCappedAtTenSeconds_AndShown()
    {
        var options = new IndexOptions();

        Assert.Equal(0.05, options.BulkCommitShare);
        Assert.Equal(TimeSpan.FromSeconds(10), options.BulkCommitInterval);
        Assert.Contains("bulk commit every 5% of the build (1 .. 10 s)", options.ToString(), StringComparison.Ordinal);
        Assert.Equal(1, Validate(new IndexOptions { BulkCommitShare = 1 }).BulkCommitShare);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-1)]
    [InlineData(65)]
    public void MaxConcurrentRebuilds_OutsideItsRange_IsRefusedNamingTheSettingValueAndRange(int value)
    {
        var error = Assert.Throws<OptionsValidationException>(() => Validate(new IndexOptions { MaxConcurrentRebuilds = value }));

        Assert.Equal(
            [$"Indexes:MaxConcurrentRebuilds is {value}; it must be from 1 to 64 (rebuilds running at once, each holding a build buffer)."],
            error.Failures);
    }

    [Fact]
    public void MaxConcurrentRebuilds_DefaultsToTwo_KeepsItsBounds_AndIsShown()
    {
        Assert.Equal(2, new IndexOptions().MaxConcurrentRebuilds);
        Assert.Equal(1, Validate(new IndexOptions { MaxConcurrentRebuilds = 1 }).MaxConcurrentRebuilds);
        Assert.Equal(64, Validate(new IndexOptions { MaxConcurrentRebuilds = 64 }).MaxConcurrentRebuilds);
        Assert.Contains("2 rebuilds at once", new IndexOptions().ToString(), StringComparison.Ordinal);
    }

    private static IndexOptions Validate(IndexOptions options) => OptionProblems.ThrowIfInvalid(new IndexOptionsValidator(), options);

    private static IndexOptions WithBytes(string setting, long value) => setting switch
    {
        nameof(IndexOptions.CommitEveryBytes) => new IndexOptions { CommitEveryBytes = value },
        nameof(IndexOptions.TakeMaxBytes) => new IndexOptions { TakeMaxBytes = value },
        nameof(IndexOptions.PrefetchBudgetBytes) => new IndexOptions { PrefetchBudgetBytes = value },
        _ => throw new ArgumentException($"no byte setting {setting}", nameof(setting)),
    };
}
