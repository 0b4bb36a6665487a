using System.Diagnostics;
using Indexing.Datasets;

namespace Indexing.Measurement.Tests;

/// <summary>
/// The IndexOnly bound's memory limit through the measurement engine, on real RocksDB and
/// Lucene.Net: over the limit the run indexes every document from chunks, in more than one, with
/// the loading out of its figures (Elapsed plus the loading it reports fits in the wall time
/// around the run) and nothing left open; up to the limit the collection is held whole as before,
/// with no loading; the foreground load has ids of the collection either way, over the limit a
/// bounded sample of them; a limit of 0 or less is refused.
/// </summary>
public sealed class InMemoryLimitTests
{
    private const long OneMiB = 1 << 20;

    [Fact]
    public async Task RunAsync_IndexOnlyOverTheLimit_IndexesEveryDocumentInSeveralChunksWithLoadingLeftOut()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.RareGiants, 4_000_000);
        var workload = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory) { InMemoryLimitBytes = OneMiB };
        Assert.True(environment.Written.Bytes > OneMiB, $"the collection holds {environment.Written.Bytes} bytes");

        await workload.LoadIntoMemoryAsync();
        Assert.False(workload.HoldsBodies);
        var wall = Stopwatch.StartNew();
        var figures = await workload.RunAsync(RebuildMode.IndexOnly, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        wall.Stop();

        Assert.Equal(environment.Written.Documents, workload.Documents);
        Assert.Equal(environment.Written.Bytes, workload.Bytes);
        Assert.Equal(environment.Written.Documents, figures.Documents);
        Assert.Equal(environment.Written.Bytes, figures.Bytes);
        Assert.True(figures.IndexOnlyChunks > 1, $"{figures.IndexOnlyChunks} chunks");
        Assert.True(figures.Elapsed > TimeSpan.Zero, $"elapsed {figures.Elapsed}");
        // The run's clock is inside the wall measured here and counted the loads: a run that
        // reported them but did not take them out of Elapsed would pass the wall.
        var loading = Assert.NotNull(figures.IndexOnlyLoadingTime);
        Assert.True(loading > TimeSpan.Zero, $"loading {loading}");
        Assert.True(figures.Elapsed + loading <= wall.Elapsed, $"elapsed {figures.Elapsed}, loading {loading}, wall {wall.Elapsed}");
        // The processor time leaves the loads' own out with them (ChunkedMemoryBatchSourceTests
        // checks what a load counts): what is left fits the cores over the indexing's wall time.
        var processor = Assert.NotNull(figures.ProcessorTime);
        Assert.InRange(processor, TimeSpan.FromTicks(1), (figures.Elapsed * Environment.ProcessorCount) + RebuildWorkloadTests.ProcessorTimeSlack);
        var stall = Assert.NotNull(figures.IndexerStall);
        Assert.InRange(stall, TimeSpan.Zero, figures.Elapsed);
        Assert.Null(figures.PeakInFlightAndBufferedBytes);
        Assert.Empty(Directory.GetDirectories(environment.IndexesDirectory));
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task RunAsync_IndexOnlyInManySmallChunks_ElapsedLeavesOutTheLoadingItReports()
    {
        // Small chunks, so that loading is a large part of the run: far more than what the wall
        // measured here adds around the run's clock (the run's set-up and clean-up).
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 4_000_000);
        var workload = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory) { InMemoryLimitBytes = 16 << 10 };
        await workload.LoadIntoMemoryAsync();

        var wall = Stopwatch.StartNew();
        var figures = await workload.RunAsync(RebuildMode.IndexOnly, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        wall.Stop();

        Assert.Equal(environment.Written.Documents, figures.Documents);
        Assert.True(figures.IndexOnlyChunks > 50, $"{figures.IndexOnlyChunks} chunks");
        var loading = Assert.NotNull(figures.IndexOnlyLoadingTime);
        Assert.True(loading > TimeSpan.Zero, $"loading {loading}");
        // The run's clock is inside the wall measured here and counted the loads: an Elapsed that
        // still held them would pass the wall by about the loading time.
        Assert.True(figures.Elapsed + loading <= wall.Elapsed, $"elapsed {figures.Elapsed}, loading {loading}, wall {wall.Elapsed}");
        // The processor time leaves the loads' own out with them (ChunkedMemoryBatchSourceTests
        // checks what a load counts): what is left fits the cores over the indexing's wall time.
        var processor = Assert.NotNull(figures.ProcessorTime);
        Assert.InRange(processor, TimeSpan.FromTicks(1), (figures.Elapsed * Environment.ProcessorCount) + RebuildWorkloadTests.ProcessorTimeSlack);
        var stall = Assert.NotNull(figures.IndexerStall);
        Assert.InRange(stall, TimeSpan.Zero, figures.Elapsed);
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task RunAsync_IndexOnlyUpToTheLimit_HoldsTheCollectionWholeAsBefore()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.RareGiants, 4_000_000);
        var workload = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory) { InMemoryLimitBytes = environment.Written.Bytes };

        await workload.LoadIntoMemoryAsync();
        Assert.True(workload.HoldsBodies);
        var indexOnly = await workload.RunAsync(RebuildMode.IndexOnly, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        var adaptive = await workload.RunAsync(RebuildMode.Adaptive, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));

        Assert.Equal(RebuildWorkload.DefaultInMemoryLimitBytes, environment.Workload.InMemoryLimitBytes);
        Assert.Equal(environment.Written.Documents, workload.Documents);
        Assert.Equal(environment.Written.Bytes, workload.Bytes);
        Assert.Equal(environment.Written.Documents, indexOnly.Documents);
        Assert.Equal(environment.Written.Bytes, indexOnly.Bytes);
        Assert.Equal(1, indexOnly.IndexOnlyChunks);
        Assert.Equal(TimeSpan.Zero, indexOnly.IndexOnlyLoadingTime);
        Assert.Null(adaptive.IndexOnlyChunks);
        Assert.Null(adaptive.IndexOnlyLoadingTime);
        Assert.Equal(environment.Written.Documents, adaptive.Documents);
        Assert.Empty(Directory.GetDirectories(environment.IndexesDirectory));
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task RunAsync_IndexOnlyOverTheLimitWithForegroundReaders_ReadersGetIdsOfTheCollection()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 1_000_000);
        var workload = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory) { InMemoryLimitBytes = 256 << 10 };

        var figures = await workload.RunAsync(RebuildMode.IndexOnly, RebuildDevice.Local, foregroundReaders: 1, idleWindow: RebuildWorkloadTests.IdleWindow)
            .WaitAsync(TimeSpan.FromMinutes(5));

        Assert.Equal(environment.Written.Documents, figures.Documents);
        Assert.True(figures.IndexOnlyChunks > 1, $"{figures.IndexOnlyChunks} chunks");
        var idle = Assert.NotNull(figures.ForegroundIdle);
        Assert.True(idle.Gets > 0, $"{idle.Gets} idle Gets");
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task LoadIntoMemoryAsync_OverTheLimit_KeepsABoundedUniformSampleOfTheCollectionsIds()
    {
        const int Cap = 40;
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 1_000_000);
        List<string> collection;
        using (var snapshot = environment.Store.CreateSnapshot())
        {
            collection = [.. snapshot.ScanMetadata(MeasurementEnvironment.Orders.Collection).Select(d => d.Id)];
        }

        Assert.True(collection.Count > 4 * Cap, $"the collection holds {collection.Count} documents");
        var over = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory)
        {
            InMemoryLimitBytes = 64 << 10,
            ForegroundIdSampleCap = Cap,
        };
        var upTo = new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory)
        {
            InMemoryLimitBytes = environment.Written.Bytes,
            ForegroundIdSampleCap = Cap,
        };

        await over.LoadIntoMemoryAsync();
        await upTo.LoadIntoMemoryAsync();

        Assert.False(over.HoldsBodies);
        Assert.Equal(collection.Count, over.Documents);
        var sampled = over.ForegroundIds;
        Assert.NotNull(sampled);
        Assert.Equal(Cap, sampled.Count);
        Assert.Equal(sampled.Count, sampled.Distinct(StringComparer.Ordinal).Count());
        var position = collection.Select((id, i) => (id, i)).ToDictionary(p => p.id, p => p.i, StringComparer.Ordinal);
        Assert.All(sampled, id => Assert.True(position.ContainsKey(id), $"{id} is not an id of the collection"));
        // Drawn across the collection, not its first ids in key order.
        Assert.Contains(sampled, id => position[id] >= collection.Count / 2);

        // Up to the limit the bodies are held, and the foreground load picks from all their ids.
        Assert.True(upTo.HoldsBodies);
        Assert.Equal(collection, upTo.ForegroundIds);
        environment.AssertNoOpenHandles();
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(-1L)]
    [InlineData(long.MinValue)]
    public void InMemoryLimitBytes_ZeroOrLess_IsRefusedNamingTheValueAndTheRule(long limit)
    {
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 50_000);

        var refused = Assert.Throws<ArgumentOutOfRangeException>(
            () => new RebuildWorkload(environment.Store, MeasurementEnvironment.Orders, environment.IndexesDirectory) { InMemoryLimitBytes = limit });

        Assert.Equal(nameof(RebuildWorkload.InMemoryLimitBytes), refused.ParamName);
        Assert.Contains($"InMemoryLimitBytes is {limit};", refused.Message, StringComparison.Ordinal);
        Assert.Contains("must be more than 0 bytes", refused.Message, StringComparison.Ordinal);
    }
}
