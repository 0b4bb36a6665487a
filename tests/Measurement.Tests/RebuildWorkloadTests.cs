using System.Xml.Linq;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Prefetcher;

namespace Indexing.Measurement.Tests;

/// <summary>
/// The measurement engine end to end on real RocksDB and Lucene.Net: every mode on both devices
/// hands over every document once, reports the figures its mode has (and not those it cannot),
/// cleans up its index and the store's snapshots; the foreground load goes through the modelled
/// disk. It asserts what was measured, never how fast.
/// </summary>
public sealed class RebuildWorkloadTests
{
    /// <summary>
    /// Idle phase for tests with foreground readers: long enough that reader threads started on a busy
    /// machine (JIT, first Gets) still complete some before the rebuild starts.
    /// </summary>
    internal static readonly TimeSpan IdleWindow = TimeSpan.FromSeconds(2);

    /// <summary>What the kernel's processor accounting may be off by over a short run: a few scheduler ticks.</summary>
    internal static readonly TimeSpan ProcessorTimeSlack = TimeSpan.FromMilliseconds(50);

    public static TheoryData<RebuildMode, bool> ModesAndDevices()
    {
        var data = new TheoryData<RebuildMode, bool>();
        foreach (var mode in Enum.GetValues<RebuildMode>())
        {
            data.Add(mode, false);
            data.Add(mode, true);
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(ModesAndDevices))]
    public async Task RunAsync_EachModeAndDevice_HandsOverEveryDocumentWithItsFigures(RebuildMode mode, bool networkDisk)
    {
        using var environment = new MeasurementEnvironment(DatasetShape.RareGiants, 4_000_000);
        var device = networkDisk ? RebuildDevice.ModelledNetworkDisk() : RebuildDevice.Local;

        var figures = await environment.Workload.RunAsync(mode, device).WaitAsync(TimeSpan.FromMinutes(5));

        Assert.Equal(environment.Written.Documents, figures.Documents);
        Assert.Equal(environment.Written.Bytes, figures.Bytes);
        Assert.Equal(mode, figures.Mode);
        Assert.Equal(device.Name, figures.Device);
        Assert.Equal(mode is RebuildMode.ReadOnly or RebuildMode.BestFixed or RebuildMode.LuceneOnly, figures.IndexerStall is null);
        Assert.Equal(mode == RebuildMode.BestFixed, figures.FixedConcurrency is not null);
        Assert.Equal(mode == RebuildMode.BestFixed, !figures.BestFixedSweep.IsEmpty);
        Assert.Equal(mode is RebuildMode.IndexOnly or RebuildMode.LuceneOnly, figures.PeakInFlightAndBufferedBytes is null);
        // The collection is within the default in-memory limit: IndexOnly held it before the clock,
        // loading nothing; LuceneOnly extracted its values outside the clock, in one piece.
        if (mode == RebuildMode.LuceneOnly)
        {
            Assert.Equal(1, figures.IndexOnlyChunks);
            Assert.True(figures.IndexOnlyLoadingTime > TimeSpan.Zero, $"untimed {figures.IndexOnlyLoadingTime}");
        }
        else
        {
            Assert.Equal(mode == RebuildMode.IndexOnly ? TimeSpan.Zero : null, figures.IndexOnlyLoadingTime);
        }

        if (figures.PeakInFlightAndBufferedBytes is { } peak)
        {
            Assert.InRange(peak, 1, figures.BudgetBytes!.Value);
            Assert.True(figures.MeanConcurrency >= 1, $"mean concurrency {figures.MeanConcurrency}");
        }

        Assert.True(figures.PeakWorkingSetBytes > 0);
        // Every mode did work on the run's clock, and no more than the machine's cores can do in it.
        var processor = Assert.NotNull(figures.ProcessorTime);
        Assert.InRange(processor, TimeSpan.FromTicks(1), (figures.Elapsed * Environment.ProcessorCount) + ProcessorTimeSlack);
        var collections = Assert.NotNull(figures.CollectionsDuringRun);
        Assert.True(collections.Gen0 >= collections.Gen1 && collections.Gen1 >= collections.Gen2 && collections.PauseTime >= TimeSpan.Zero, $"{collections}");
        Assert.NotEmpty(figures.Timeline);
        Assert.Null(figures.ForegroundIdle);
        Assert.Empty(Directory.GetDirectories(environment.IndexesDirectory));
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public void GarbageCollections_AcrossAFullCollection_CountsItInEveryGenerationWithItsPause()
    {
        var before = GarbageCollections.Now();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true);
        var during = GarbageCollections.Now() - before;

        Assert.True(during.Gen2 >= 1 && during.Gen1 >= during.Gen2 && during.Gen0 >= during.Gen1, $"{during}");
        Assert.True(during.PauseTime > TimeSpan.Zero, $"{during}");
        Assert.Equal(during.PauseTime / during.Gen0, during.MeanPause);
    }

    [Fact]
    public async Task RunAsync_IndexOnly_MakesBulkCommitsAsARebuildFromThePrefetcherDoes()
    {
        // A cadence of 100 ms (the cap wins over the 1 s floor), so that a build of a second or so
        // makes several bulk commits: the descriptions as text, on one thread, make it last that
        // long (about 1.5 s on a 2-core machine). Takes of 64 KiB, so that the key a commit records
        // moves every few dozen documents (the default 4 MiB takes would hand out 8 MB in two).
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 8_000_000);
        var definition = IndexDefinition.Parse($$"""
            { "name": "orders-descriptions", "collection": "{{DatasetSpec.DefaultCollection}}", "fields": [
              { "name": "description", "path": "description", "type": "text" }
            ] }
            """);
        var options = new IndexOptions { BulkCommitInterval = TimeSpan.FromMilliseconds(100), IndexingThreads = 1, TakeMaxBytes = 64 << 10 };
        var workload = new RebuildWorkload(environment.Store, definition, environment.IndexesDirectory, options);

        var indexOnly = await workload.RunAsync(RebuildMode.IndexOnly, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        var adaptive = await workload.RunAsync(RebuildMode.Adaptive, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        var readOnly = await workload.RunAsync(RebuildMode.ReadOnly, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));

        // The marker at the start and the last commit are 2; a bound that skipped the bulk commits
        // (its source saying nothing about how far it had handed out) made exactly those.
        Assert.Equal(1, indexOnly.IndexOnlyChunks);
        Assert.True(indexOnly.Commits > 2, $"IndexOnly made {indexOnly.Commits} commits in {indexOnly.Elapsed}");
        Assert.True(adaptive.Commits > 2, $"Adaptive made {adaptive.Commits} commits in {adaptive.Elapsed}");
        Assert.Null(readOnly.Commits);
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task RunAsync_BestFixed_TriesLFromTheMostDownAndKeepsTheFastestPinnedRun()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 4_000_000);

        var figures = await environment.Workload.RunAsync(RebuildMode.BestFixed, RebuildDevice.ModelledNetworkDisk()).WaitAsync(TimeSpan.FromMinutes(5));

        var sweep = figures.BestFixedSweep;
        Assert.Equal(RebuildWorkload.BestFixedConcurrencies.Take(sweep.Length), sweep.Select(r => r.Concurrency));
        Assert.True(sweep.Length >= 3, $"stopped after {sweep.Length} runs");
        var winner = sweep.MaxBy(r => r.MegabytesPerSecond);
        Assert.Equal(winner.Concurrency, figures.FixedConcurrency);
        Assert.Equal(winner.Elapsed, figures.Elapsed);
        // L was pinned for the whole run: its mean is the fixed L itself.
        Assert.Equal(figures.FixedConcurrency, figures.MeanConcurrency);
        Assert.Equal(environment.Written.Documents, figures.Documents);
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task RunAsync_BestFixedWithForegroundReaders_Throws()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 200_000);

        var error = await Assert.ThrowsAsync<ArgumentOutOfRangeException>(() => environment.Workload.RunAsync(RebuildMode.BestFixed, RebuildDevice.Local, foregroundReaders: 1));

        Assert.Contains("BestFixed measures reading alone", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task RunAsync_ForegroundReadersOnNetworkDisk_GetsPayTheModelledDelay()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 2_000_000);
        var device = RebuildDevice.ModelledNetworkDisk();

        var figures = await environment.Workload.RunAsync(RebuildMode.Adaptive, device, foregroundReaders: 2, idleWindow: IdleWindow)
            .WaitAsync(TimeSpan.FromMinutes(5));

        Assert.Equal(environment.Written.Documents, figures.Documents);
        var idle = Assert.NotNull(figures.ForegroundIdle);
        var during = Assert.NotNull(figures.ForegroundDuringRebuild);
        Assert.True(idle.Gets > 0 && during.Gets > 0, $"idle {idle.Gets} Gets, during {during.Gets}");
        // Every Get waits at least the model's per-request latency, so a load that bypassed the
        // shared model would show local-disk latencies (microseconds) here.
        Assert.True(idle.P50 >= device.NetworkDisk!.RequestLatency, $"idle p50 {idle.P50}");
        Assert.True(during.P50 >= device.NetworkDisk.RequestLatency, $"during p50 {during.P50}");
        Assert.Contains(figures.Timeline, p => p.ForegroundP99 is not null);
        environment.AssertNoOpenHandles();
    }

    [Fact]
    public async Task RunAsync_ReadingAloneOnASlowDisk_TimelineShowsTheSinkWaitingInEveryInterval()
    {
        // A dropping sink waits for reads the whole run. Points come from the prefetcher's own
        // snapshots (published at its ticks): sampled against the sampler's clock, a snapshot read
        // twice made an interval with 0% wait and 0 MB/s and the next one two ticks' worth; with
        // that sampler this test failed five runs out of five.
        using var environment = new MeasurementEnvironment(DatasetShape.LogNormal, 80_000_000);
        var device = RebuildDevice.ModelledNetworkDisk(new NetworkDiskModelOptions
        {
            StreamBandwidthBytesPerSecond = 2_000_000,
            RequestLatency = TimeSpan.FromMilliseconds(4),
        });

        var figures = await environment.Workload.RunAsync(RebuildMode.ReadOnly, device).WaitAsync(TimeSpan.FromMinutes(5));

        var timeline = figures.Timeline;
        var report = string.Join("; ", timeline.Select(p => FormattableString.Invariant($"{p.Elapsed.TotalSeconds:0.00} s {p.MegabytesPerSecond:0.0} MB/s {p.ConsumerWaitPercent:0}%")));
        // 80 MB at up to 32 MB/s: about a dozen ticks here, fewer when a loaded machine delays them.
        Assert.True(timeline.Length >= 3, $"only {timeline.Length} points: {report}");
        Assert.True(timeline.Zip(timeline.Skip(1)).All(pair => pair.First.Elapsed < pair.Second.Elapsed), report);
        Assert.All(timeline.SkipLast(1), p => Assert.True(p.ConsumerWaitPercent >= 50, report));
        Assert.Equal(environment.Written.Bytes, figures.Bytes);
    }

    [Fact]
    public async Task TimelineFiles_AfterARun_WriteOneCsvRowPerSampleAndAFivePanelSvg()
    {
        using var environment = new MeasurementEnvironment(DatasetShape.Uniform, 1_000_000);
        var figures = await environment.Workload.RunAsync(RebuildMode.Adaptive, RebuildDevice.Local).WaitAsync(TimeSpan.FromMinutes(5));
        var csv = Path.Combine(environment.Root, "timeline.csv");
        var svg = Path.Combine(environment.Root, "timeline.svg");

        RebuildTimelineFiles.WriteCsv(csv, figures.Timeline);
        RebuildTimelineFiles.WriteSvg(svg, "adaptive <uniform> & local", figures.Timeline);

        var lines = File.ReadAllLines(csv);
        Assert.Equal(figures.Timeline.Length + 1, lines.Length);
        Assert.StartsWith("elapsed_s,", lines[0], StringComparison.Ordinal);
        var document = XDocument.Load(svg);
        XNamespace ns = "http://www.w3.org/2000/svg";
        Assert.Equal(5, document.Descendants(ns + "polyline").Count());
        Assert.Contains(document.Descendants(ns + "text"), t => t.Value == "adaptive <uniform> & local");
    }
}
