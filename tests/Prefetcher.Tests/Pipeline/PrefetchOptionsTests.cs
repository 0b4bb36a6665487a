using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher.Tests;

public sealed class PrefetchOptionsTests
{
    [Fact]
    public void Validate_Defaults_PassAndDescribeTheEffectiveConfiguration()
    {
        var options = new PrefetchOptions().Validate();

        var text = options.ToString();

        Assert.Equal(256L * 1024 * 1024, options.BudgetBytes);
        Assert.Equal(TimeSpan.FromMilliseconds(250), options.TickInterval);
        Assert.Equal(TimeSpan.FromMilliseconds(150), options.FirstTick);
        Assert.Equal(TimeSpan.FromMinutes(5), options.HistoryLength);
        Assert.Null(options.MaxBytesPerSecond);
        Assert.StartsWith("prefetch: budget 256 MiB, concurrency up to the controller's maximum, no MB/s cap; tick 250.0 ms ±10% (the first at 150.0 ms)", text);
        Assert.Contains("history 5 min", text);
        Assert.Contains("controller: L 2..64,", text);
        Assert.Contains("baselines read 1024 documents per batch", text);
    }

    [Fact]
    public void Validate_SeveralInvalidSettings_NamesEveryOne()
    {
        var options = new PrefetchOptions
        {
            BudgetBytes = 0,
            TickInterval = TimeSpan.Zero,
            FirstTickInterval = TimeSpan.FromSeconds(11),
            TickJitterFraction = 0.9,
            HistoryLength = TimeSpan.FromSeconds(1),
            MaxBytesPerSecond = 0,
            BaselineBatchDocuments = 0,
        };

        var problem = Assert.Throws<OptionsValidationException>(() => options.Validate());

        Assert.Equal(typeof(PrefetchOptions), problem.OptionsType);
        foreach (var name in new[] { "BudgetBytes", "TickInterval", "FirstTickInterval", "TickJitterFraction", "HistoryLength", "MaxBytesPerSecond", "BaselineBatchDocuments" })
        {
            Assert.Contains($"PrefetchOptions.{name} must", problem.Message);
        }
    }

    [Fact]
    public void Start_InvalidOptions_ThrowsBeforeTakingTheSource()
    {
        var source = new InMemoryReadSourceDouble([]);

        Assert.Throws<OptionsValidationException>(() => Strategies.StartAdaptive(source, new PrefetchOptions { BudgetBytes = -1 }));

        Assert.Equal(0, source.DisposeCount);
    }

    [Fact]
    public void ToString_Limits_StateEachCap()
    {
        var limits = new PrefetchLimits { BudgetBytes = 64L * 1024 * 1024, MaxConcurrency = 3, MaxBytesPerSecond = 50_000_000 };

        Assert.Equal("budget 64 MiB, max concurrency 3, max 50 MB/s", limits.ToString());
    }
}
