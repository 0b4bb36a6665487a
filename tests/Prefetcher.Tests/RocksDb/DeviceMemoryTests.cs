using Indexing.Datasets;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Prefetches of one store through <see cref="Prefetch.Start"/> with the engine's devices: the second
/// starts where the device remembers, two at once split its L, and the modelled disk is a device of its own.
/// </summary>
public sealed class DeviceMemoryTests
{
    private const string Collection = DatasetSpec.DefaultCollection;

    [Fact]
    public async Task Start_DeviceRemembersAnL_TheNextAdaptivePrefetchStartsThere()
    {
        using var temp = new TempStore();
        temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 2_000_000));
        var devices = new PrefetchDevices();
        var device = devices.For(Prefetch.DeviceName(temp.Store, diskModel: null));
        Assert.True(device.Remember(12, 20e6));

        await using var pipeline = (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { Devices = devices, BudgetBytes = 256 << 10 });
        Assert.Same(device, pipeline.Device);
        Assert.Equal(1, device.Readers);

        await Strategies.EventuallyAsync(() => !pipeline.Pressure.RecentDecisions.IsEmpty, "the first decision");
        var first = pipeline.Pressure.RecentDecisions[0];
        Assert.Equal(("start", 12), (first.Kind, first.ConcurrencyLimit));
        Assert.Contains("where the last prefetch reading this device alone settled (L=12 at 20 MB/s a stream)", first.Reason, StringComparison.Ordinal);

        await Strategies.DrainWithPatienceAsync(pipeline);
        await pipeline.DisposeAsync();
        Assert.Equal(0, device.Readers);
    }

    [Fact]
    public async Task Start_TwoAdaptivePrefetchesAtOnce_EachRunsItsShareOfTheRememberedL()
    {
        using var temp = new TempStore();
        temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 4_000_000));
        var devices = new PrefetchDevices();
        var device = devices.For(Prefetch.DeviceName(temp.Store, diskModel: null));
        device.Remember(12, 20e6);
        var options = new PrefetchOptions { Devices = devices, BudgetBytes = 1 << 20 };

        // No consumer: each fills its budget (a quarter of the collection) and stays running.
        await using var first = (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, options);
        await using var second = (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, options);
        Assert.Equal((2, 6), (device.Readers, device.Share(64)));
        Assert.Equal(6, second.Admission.ConcurrencyLimit);

        // The first's next tick cuts it to its share, saying why.
        await Strategies.EventuallyAsync(
            () => first.Pressure.RecentDecisions.Any(d => d.ConcurrencyLimit == 6 && d.Reason.Contains("share of the device, read by 2", StringComparison.Ordinal)),
            "the first prefetch runs its share", () => string.Join("; ", first.Pressure.RecentDecisions.Select(d => d.Reason)));
        Assert.InRange(first.Admission.ConcurrencyLimit, 1, 6);

        await second.DisposeAsync();
        Assert.Equal((1, (int?)null), (device.Readers, device.Share(64)));
        Assert.Equal(new RememberedConcurrency(12, 20e6), device.Remembered);
    }

    [Fact]
    public async Task Start_BaselinesAndFixedL_NeitherJoinNorLearnTheDevice_AndTheModelledDiskIsADeviceOfItsOwn()
    {
        using var temp = new TempStore();
        temp.Load(StoreDatasets.SmallSpec(DatasetShape.Uniform, totalBytes: 500_000));
        var devices = new PrefetchDevices();
        var local = devices.For(Prefetch.DeviceName(temp.Store, diskModel: null));
        var model = new NetworkDiskModel(new NetworkDiskModelOptions());
        Assert.NotEqual(local.Name, Prefetch.DeviceName(temp.Store, model));

        await using var fixedBatch = (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, PrefetchStrategy.FixedBatch, new PrefetchOptions { Devices = devices });
        await using var fixedL = (PrefetchPipeline)Prefetch.Start(
            temp.Store, Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { Devices = devices, Controller = new ControllerOptions { FixedConcurrency = 3 } });
        // A budget far below the collection: with no consumer it reads on until its device lease is checked.
        await using var modelled = (PrefetchPipeline)Prefetch.Start(temp.Store, Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { Devices = devices, BudgetBytes = 64 << 10 }, model);

        Assert.Null(fixedBatch.Device);
        Assert.Null(fixedL.Device);
        Assert.Equal(0, local.Readers);
        Assert.Equal((1, Prefetch.DeviceName(temp.Store, model)), (modelled.Device!.Readers, modelled.Device.Name));
        Assert.NotSame(local, modelled.Device);
    }
}
