using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher.Tests;

public sealed class ControllerOptionsTests
{
    [Fact]
    public void Validate_Defaults_PassWithMaximumIndependentOfCores()
    {
        var options = new ControllerOptions().Validate();

        // Reads are I/O-bound: the ceiling follows what devices need (a network disk's depth of 16 and
        // more), not 4 x cores (8 on this 2-core machine).
        Assert.Equal(64, options.MaxConcurrency);
        Assert.True(options.MaxConcurrency >= new NetworkDiskModelOptions().UsefulQueueDepth);
        Assert.Equal(2, options.InitialConcurrency);
    }

    [Fact]
    public void Validate_SeveralInvalidSettings_NamesEveryOne()
    {
        var options = new ControllerOptions
        {
            MaxConcurrency = 65,
            QueueingCutFactor = 1.5,
            SettleTime = TimeSpan.Zero,
            MinTaskBytes = 0,
        };

        var error = Assert.Throws<OptionsValidationException>(() => options.Validate());

        foreach (var name in new[] { "MaxConcurrency", "QueueingCutFactor", "SettleTime", "MinTaskBytes" })
        {
            Assert.Contains(name, error.Message);
        }
    }

    [Fact]
    public void Validate_FirstTaskBelowTheMinimumTask_NamesTheSettingTheRuleAndTheValue()
    {
        var options = new ControllerOptions { FirstTaskBytes = 128 * 1024 };

        var message = Assert.Throws<OptionsValidationException>(() => options.Validate()).Message;

        Assert.Contains("FirstTaskBytes must be at least MinTaskBytes = 262144 (was 131072)", message);
    }

    [Fact]
    public void Validate_InitialAboveMaximum_Throws()
    {
        var options = new ControllerOptions { InitialConcurrency = 9, MaxConcurrency = 8 };

        Assert.Contains("InitialConcurrency", Assert.Throws<OptionsValidationException>(() => options.Validate()).Message);
    }

    [Fact]
    public void Constructor_InvalidOptions_Throws()
    {
        Assert.Throws<OptionsValidationException>(() => new ConcurrencyController(new ControllerOptions { GrowthMinGain = -0.1 }));
    }

    [Fact]
    public void ToString_StatesTheEffectiveConfiguration()
    {
        var text = new ControllerOptions { MaxConcurrency = 8 }.ToString();

        Assert.Contains("L 2..8", text);
        Assert.Contains("keep a step of 1.25x (at least +1) if it adds >= 5% throughput,", text);
        Assert.Contains("slow start doubles while it pays;", text);
        Assert.Contains("cut to <= 0.75x when reads take > 2.0x their un-queued time (per size class, 30.0 s minimum)", text);
        Assert.Contains("foreground p99 target 1.3x its 10 min minimum", text);
        Assert.Contains("cooldown 2.0 s", text);
        Assert.Contains("tasks 75.0 ms of I/O in [256 KiB, 64 MiB]", text);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(9)]
    public void Validate_FixedConcurrencyOutsideOneToMaximum_Throws(int fixedL)
    {
        var options = new ControllerOptions { MaxConcurrency = 8, FixedConcurrency = fixedL };

        var error = Assert.Throws<OptionsValidationException>(() => options.Validate());

        Assert.Contains($"FixedConcurrency must be in [1, MaxConcurrency = 8] when set (was {fixedL})", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ToString_FixedConcurrency_SaysSo()
    {
        Assert.StartsWith("controller: L fixed at 16;", new ControllerOptions { FixedConcurrency = 16 }.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void ToString_ExplicitForegroundTarget_IsStated()
    {
        var text = new ControllerOptions { ForegroundTarget = TimeSpan.FromMilliseconds(10) }.ToString();

        Assert.Contains("foreground p99 target 10.0 ms,", text);
    }
}
