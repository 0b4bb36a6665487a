namespace Indexing.Prefetcher.Tests;

/// <summary>
/// What a device remembers for the next prefetch (<see cref="PrefetchDevice"/>), how prefetches reading
/// it at once split its L, and how the controller starts from what it remembers.
/// </summary>
public sealed class PrefetchDeviceTests
{
    [Fact]
    public void Share_AloneNone_SeveralSplitTheRememberedL_RoundedUp_OrTheMaximumWhenNothingIsRemembered()
    {
        var device = new PrefetchDevice("disk");
        using var first = device.Join();
        Assert.Null(device.Share(64));

        using (device.Join())
        {
            Assert.Equal(32, device.Share(64));
            device.Remember(12, 5e6);
            Assert.Null(device.Remembered);
            Assert.Equal(32, device.Share(64));
        }

        Assert.True(device.Remember(13, 5e6));
        using var second = device.Join();
        using var third = device.Join();
        Assert.Equal((3, 5), (device.Readers, device.Share(64)));
    }

    [Fact]
    public void Remember_AloneKeepsTheLatest_ALeaseEndsOnce_AndDevicesAreOnePerName()
    {
        var devices = new PrefetchDevices();
        var device = devices.For("/data/store");
        Assert.Same(device, devices.For("/data/store"));
        Assert.NotSame(device, devices.For("/data/store through the modelled disk"));

        var lease = device.Join();
        Assert.True(device.Remember(16, 4e6));
        Assert.True(device.Remember(12, null));
        lease.Dispose();
        lease.Dispose();

        Assert.Equal(new RememberedConcurrency(12, 4e6), device.Remembered);
        Assert.Equal(0, device.Readers);
    }

    [Fact]
    public void Controller_RememberedStart_FirstDecisionIsTheRememberedL_ThenFineStepsNotSlowStart()
    {
        var driver = new ControllerDriver(new ControllerOptions(), new RememberedConcurrency(12, 5e6));
        Assert.Equal(12, driver.Controller.Concurrency);

        var start = driver.Tick();
        Assert.Equal((ControllerDecisionKind.Start, 12), (start.Kind, start.Concurrency));
        Assert.Contains("settled (L=12 at 5 MB/s a stream)", start.Reason, StringComparison.Ordinal);

        // The driver's device scales linearly: from the default start it would go x4 at once and double on.
        var grow = driver.TickUntil("grow", TimeSpan.FromSeconds(5));
        Assert.Equal(15, grow.Concurrency);
        Assert.DoesNotContain("slow start", grow.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Controller_RememberedStart_ClampedToTheLiveLimit_AndTheRateSizesTheFirstTasks()
    {
        var options = new ControllerOptions();
        var driver = new ControllerDriver(options, new RememberedConcurrency(24, 5e6));
        Assert.Equal((long)(5e6 * options.TargetTaskDuration.TotalSeconds), driver.Controller.TargetTaskBytes);

        var start = driver.Tick(signals => signals with { MaxConcurrency = 8 });

        Assert.Equal((ControllerDecisionKind.Start, 8), (start.Kind, start.Concurrency));
        Assert.StartsWith("start: L=8 (limit 8)", start.Reason, StringComparison.Ordinal);
    }

    [Fact]
    public void Controller_FixedConcurrency_IgnoresTheRememberedStart()
    {
        var driver = new ControllerDriver(new ControllerOptions { FixedConcurrency = 5 }, new RememberedConcurrency(12, 5e6));

        Assert.Equal(new ControllerOptions().InitialConcurrency, driver.Controller.Concurrency);
        Assert.Equal(5, driver.Tick().Concurrency);
    }

    [Fact]
    public void Controller_SettlesOnAPlateau_WhereTheDeviceStopsPaying()
    {
        // Gains stop past 16 readers: the climb ends on a plateau there, what a pipeline remembers.
        var driver = new ControllerDriver(new ControllerOptions()) { BytesPerSecondAt = l => 50e6 * Math.Min(l, 16) };

        driver.TickUntil("hold: plateau", TimeSpan.FromSeconds(60));

        Assert.True(driver.Controller.Settled);
        Assert.InRange(driver.Controller.Concurrency, 16, 20);
        Assert.NotNull(driver.Controller.StreamBytesPerSecond);
    }
}
