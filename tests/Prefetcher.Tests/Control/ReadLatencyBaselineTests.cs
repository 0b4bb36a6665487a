namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The queueing signal on its own, fed the reads a closed loop of L readers completes on the
/// virtual disk model tick by tick: skewed size mixes show no queueing, real queues do.
/// </summary>
public sealed class ReadLatencyBaselineTests
{
    private const long KiB = 1024;
    private const long MiB = 1024 * KiB;
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(250);
    private static readonly double Limit = new ControllerOptions().LatencyInflationLimit;

    /// <summary>Rare giants as the planner cuts them: each giant a Get of its own, the small documents between two giants one read.</summary>
    private static (long Bytes, int Documents) GiantsAmongMultiGets(Random random)
    {
        if (random.NextDouble() < 0.5)
        {
            return (random.NextInt64(2_000_000, 20_000_001), 1);
        }
        // Gaps between giants are geometric: many short ones (MultiGets of a few 2 KiB documents).
        var documents = Math.Min(4096, 1 + (int)(-Math.Log(1 - random.NextDouble()) * 200));
        return (documents * 2 * KiB, documents);
    }

    [Fact]
    public void ClassOf_HalfOctavesAndOneOrSeveralDocuments()
    {
        Assert.Equal(ReadLatencyBaseline.ClassOf(1 * MiB, 64), ReadLatencyBaseline.ClassOf((long)(1.4 * MiB), 64));
        Assert.NotEqual(ReadLatencyBaseline.ClassOf(1 * MiB, 64), ReadLatencyBaseline.ClassOf((long)(1.5 * MiB), 64));
        Assert.NotEqual(ReadLatencyBaseline.ClassOf(1 * MiB, 1), ReadLatencyBaseline.ClassOf(1 * MiB, 2));
        Assert.Equal(ReadLatencyBaseline.ClassOf(1 * MiB, 2), ReadLatencyBaseline.ClassOf(1 * MiB, 4096));
    }

    [Fact]
    public void Judge_GiantsAmongMultiGetsAtTheDevicesDepth_NeverShowsQueueing()
    {
        // 16 readers on a device 16 deep: nothing queues. Each MultiGet also pays 50 us per document
        // (CPU; 2 cores under reader threads), as the demo run showed.
        var ticks = ClosedLoop.Run(new NetworkDiskModelOptions(), (random, _) => GiantsAmongMultiGets(random), _ => 16, TimeSpan.FromSeconds(60), TimeSpan.FromMicroseconds(50));

        var (evidence, _) = Judge(ticks);

        Assert.All(evidence, e => Assert.False(e.Evidence.ShowsQueueing(Limit), $"{e.At}: {e.Evidence}"));
        Assert.InRange(evidence.Max(e => e.Evidence.Inflation), 1.0, 1.5);
        // What the single latency-per-MiB baseline made of the same reads: a queue, and a cut.
        Assert.True(OldLatencyPerMiBInflation(ticks) > Limit, $"the old signal saw {OldLatencyPerMiBInflation(ticks):0.0}x");
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Judge_SizesGrowingOrShrinkingAlongTheRun_NeverShowsQueueing(bool growing)
    {
        // Reads from 16 KiB to 16 MiB (or back) over a minute, 8 readers on a 16-deep device.
        var duration = TimeSpan.FromSeconds(60);
        var ticks = ClosedLoop.Run(
            new NetworkDiskModelOptions(),
            (random, at) =>
            {
                var progress = Math.Clamp(at / duration, 0, 1);
                var bytes = (long)(16 * KiB * Math.Pow(1024, growing ? progress : 1 - progress) * (0.75 + (random.NextDouble() / 2)));
                return (bytes, (int)Math.Max(1, bytes / (4 * KiB)));
            },
            _ => 8,
            duration);

        var (evidence, _) = Judge(ticks);

        Assert.All(evidence, e => Assert.False(e.Evidence.ShowsQueueing(Limit), $"{e.At}: {e.Evidence}"));
        if (!growing)
        {
            // Shrinking reads pay the per-request cost for ever fewer bytes: the old signal took that for a queue.
            Assert.True(OldLatencyPerMiBInflation(ticks) > Limit, $"the old signal saw {OldLatencyPerMiBInflation(ticks):0.0}x");
        }
    }

    [Fact]
    public void Judge_ThreeTimesTheDevicesDepthWithGiantsAmongMultiGets_ShowsQueueingInEveryClass()
    {
        // 4 readers for 10 s, then 12 on a device that serves 4 at once: every read waits its turn.
        var disk = new NetworkDiskModelOptions { UsefulQueueDepth = 4 };
        var ticks = ClosedLoop.Run(disk, (random, _) => GiantsAmongMultiGets(random), at => at < TimeSpan.FromSeconds(10) ? 4 : 12, TimeSpan.FromSeconds(20));

        var (evidence, _) = Judge(ticks);

        Assert.All(evidence.Where(e => e.At < TimeSpan.FromSeconds(10)), e => Assert.False(e.Evidence.ShowsQueueing(Limit), $"{e.At}: {e.Evidence}"));
        var queued = evidence.Where(e => e.At > TimeSpan.FromSeconds(12)).ToList();
        Assert.All(queued, e => Assert.True(e.Evidence.ShowsQueueing(Limit), $"{e.At}: {e.Evidence}"));
        // L / depth = 3: the inflation says how far to cut.
        Assert.InRange(queued.Average(e => e.Evidence.Inflation), 2.5, 3.5);
    }

    [Fact]
    public void Judge_DeviceWideCapSharedByTooManyStreams_ShowsQueueing()
    {
        // 200 MB/s for the whole device: two 60 MB/s streams fit, twelve get 17 MB/s each.
        var disk = new NetworkDiskModelOptions { DeviceBandwidthBytesPerSecond = 200_000_000 };
        var ticks = ClosedLoop.Run(disk, (random, _) => (random.NextInt64(3 * MiB, 5 * MiB), 1000), at => at < TimeSpan.FromSeconds(10) ? 2 : 12, TimeSpan.FromSeconds(20));

        var (evidence, _) = Judge(ticks);

        Assert.All(evidence.Where(e => e.At < TimeSpan.FromSeconds(10)), e => Assert.False(e.Evidence.ShowsQueueing(Limit), $"{e.At}: {e.Evidence}"));
        Assert.All(evidence.Where(e => e.At > TimeSpan.FromSeconds(12)), e => Assert.True(e.Evidence.ShowsQueueing(Limit), $"{e.At}: {e.Evidence}"));
    }

    [Fact]
    public void Judge_OnlyOneClassSlow_IsNotAQueue()
    {
        // A burst of slow small MultiGets (cold blocks) while large reads keep their time.
        var baseline = new ReadLatencyBaseline(TimeSpan.FromSeconds(30));
        var now = TimeSpan.Zero;
        ReadSample[] Mixed(double smallMilliseconds) =>
            [.. ControllerDriver.Reads(4, 64 * KiB, TimeSpan.FromMilliseconds(smallMilliseconds), 32), .. ControllerDriver.Reads(2, 4 * MiB, TimeSpan.FromMilliseconds(72), 1000)];
        for (var i = 0; i < 8; i++)
        {
            baseline.Observe(now += Tick, Mixed(3));
        }

        for (var i = 0; i < 8; i++)
        {
            baseline.Observe(now += Tick, Mixed(30));
        }
        var evidence = baseline.Judge(now)!.Value;

        // 10x in the small class lifts the time-weighted ratio only a little, and the large class shows none.
        Assert.Equal(2, evidence.Classes);
        Assert.Equal(1.0, evidence.MajorityClassInflation!.Value, precision: 6);
        Assert.False(evidence.ShowsQueueing(Limit), evidence.ToString());
    }

    [Fact]
    public void Judge_FewerThanThreeReadsOrNoBaseline_SaysNothing()
    {
        var baseline = new ReadLatencyBaseline(TimeSpan.FromSeconds(30));
        Assert.Null(baseline.Judge(Tick));

        baseline.Observe(Tick, ControllerDriver.Reads(2, MiB, TimeSpan.FromMilliseconds(4)));

        Assert.Null(baseline.Judge(Tick));
        // Reads older than the judgement's window leave it.
        baseline.Observe(2 * Tick, ControllerDriver.Reads(2, MiB, TimeSpan.FromMilliseconds(4)));
        Assert.NotNull(baseline.Judge(2 * Tick));
        baseline.Observe(TimeSpan.FromSeconds(1) + (2 * Tick), []);
        Assert.Null(baseline.Judge(TimeSpan.FromSeconds(1) + (2 * Tick)));
    }

    [Fact]
    public void Judge_ReadsInFlightMeasured_GivesWhatTheWindowDeliveredByLittlesLaw()
    {
        var baseline = new ReadLatencyBaseline(TimeSpan.FromSeconds(30));
        // Four ticks: 8 reads in flight throughout, 1 MiB reads taking 10 ms (100 MiB/s a stream).
        for (var i = 1; i <= 4; i++)
        {
            baseline.Observe(i * Tick, ControllerDriver.Reads(3, MiB, TimeSpan.FromMilliseconds(10)), Tick, 8 * Tick);
        }
        // A fifth tick at 4 in flight whose reads take twice as long: the window (the last second) is ticks 2-5.
        baseline.Observe(5 * Tick, ControllerDriver.Reads(3, MiB, TimeSpan.FromMilliseconds(20)), Tick, 4 * Tick);

        var evidence = baseline.Judge(5 * Tick)!.Value;

        // Mean in flight (8 + 8 + 8 + 4) / 4 = 7, x 12 MiB over 9 x 10 ms + 3 x 20 ms = 0.15 s of latency.
        Assert.Equal(7 * 12 * MiB / 0.15, evidence.BytesPerSecond!.Value, precision: 3);
        // Without reads in flight measured there is no such figure.
        var unmeasured = new ReadLatencyBaseline(TimeSpan.FromSeconds(30));
        unmeasured.Observe(Tick, ControllerDriver.Reads(3, MiB, TimeSpan.FromMilliseconds(10)));
        Assert.Null(unmeasured.Judge(Tick)!.Value.BytesPerSecond);
    }

    [Fact]
    public void Observe_TheRampsReads_TeachNoClassButCountInWhatTheWindowDelivered()
    {
        var baseline = new ReadLatencyBaseline(TimeSpan.FromSeconds(30));
        var ramp = new ReadSample(2 * MiB, 64, TimeSpan.FromMilliseconds(20), Ramp: true);
        baseline.Observe(Tick, [ramp, ramp, ramp], Tick, 2 * Tick);

        Assert.Null(baseline.TicksPerByte(ReadLatencyBaseline.ClassOf(2 * MiB, 64), Tick));
        // Three reads of the class at twice the ramp's time: the first the class has learned, so no queue.
        baseline.Observe(2 * Tick, ControllerDriver.Reads(3, 2 * MiB, TimeSpan.FromMilliseconds(40)), Tick, 2 * Tick);
        var evidence = baseline.Judge(2 * Tick)!.Value;

        Assert.Equal(1.0, evidence.Inflation, precision: 6);
        // Six reads of 2 MiB, 0.18 s of latency, two in flight on average.
        Assert.Equal(2 * 12 * MiB / 0.18, evidence.BytesPerSecond!.Value, precision: 3);
    }

    [Fact]
    public void TicksPerByte_OlderThanTheWindow_IsForgotten()
    {
        var baseline = new ReadLatencyBaseline(TimeSpan.FromSeconds(30));
        var sizeClass = ReadLatencyBaseline.ClassOf(MiB, 64);
        baseline.Observe(TimeSpan.FromSeconds(1), ControllerDriver.Reads(3, MiB, TimeSpan.FromMilliseconds(4)));
        baseline.Observe(TimeSpan.FromSeconds(20), ControllerDriver.Reads(3, MiB, TimeSpan.FromMilliseconds(8)));

        Assert.Equal(TimeSpan.FromMilliseconds(4).Ticks / (double)MiB, baseline.TicksPerByte(sizeClass, TimeSpan.FromSeconds(20)));
        Assert.Equal(TimeSpan.FromMilliseconds(8).Ticks / (double)MiB, baseline.TicksPerByte(sizeClass, TimeSpan.FromSeconds(31)));
        Assert.Null(baseline.TicksPerByte(ReadLatencyBaseline.ClassOf(MiB, 1), TimeSpan.FromSeconds(31)));
    }

    private static (List<(TimeSpan At, QueueingEvidence Evidence)> Evidence, ReadLatencyBaseline Baseline) Judge(List<(TimeSpan At, ReadSample[] Reads)> ticks)
    {
        var baseline = new ReadLatencyBaseline(new ControllerOptions().LatencyBaselineWindow);
        var evidence = new List<(TimeSpan, QueueingEvidence)>();
        foreach (var (at, reads) in ticks)
        {
            baseline.Observe(at, reads);
            if (baseline.Judge(at) is { } judged)
            {
                evidence.Add((at, judged));
            }
        }
        Assert.NotEmpty(evidence);
        return (evidence, baseline);
    }

    /// <summary>
    /// The signal this one replaced: each tick's median latency per MiB (ticks with three reads or
    /// more) over its windowed minimum; the largest such ratio over the run.
    /// </summary>
    private static double OldLatencyPerMiBInflation(List<(TimeSpan At, ReadSample[] Reads)> ticks)
    {
        var minimum = WindowedExtremum.Min(new ControllerOptions().LatencyBaselineWindow);
        var worst = 0.0;
        foreach (var (at, reads) in ticks.Where(t => t.Reads.Length >= 3))
        {
            var perMiB = reads.Select(r => r.Latency.Ticks * (double)MiB / r.Bytes).Order().ToList();
            var median = perMiB[perMiB.Count / 2];
            minimum.Add(at, median);
            worst = Math.Max(worst, median / minimum.Current(at)!.Value);
        }
        return worst;
    }

    /// <summary>L readers each issue their next read when the last completes, on the virtual disk; reads grouped by the tick they complete in.</summary>
    private static class ClosedLoop
    {
        /// <param name="next">The next read's size and documents, from the seeded random source and the time it is issued.</param>
        /// <param name="documentCost">The store's time per document of a MultiGet or range read, outside the device's slots.</param>
        public static List<(TimeSpan At, ReadSample[] Reads)> Run(
            NetworkDiskModelOptions disk, Func<Random, TimeSpan, (long Bytes, int Documents)> next, Func<TimeSpan, int> readersAt, TimeSpan duration, TimeSpan documentCost = default)
        {
            var clock = new NetworkDiskModelClock(disk);
            var random = new Random(7);
            var completions = new PriorityQueue<(TimeSpan Issued, long Bytes, int Documents), TimeSpan>();
            var ticks = new List<(TimeSpan, ReadSample[])>();
            var tickReads = new List<ReadSample>();
            var inFlight = 0;
            var now = TimeSpan.Zero;
            for (var tickEnd = Tick; tickEnd <= duration; tickEnd += Tick)
            {
                while (true)
                {
                    while (inFlight < readersAt(now))
                    {
                        var (bytes, documents) = next(random, now);
                        var done = clock.Submit(now, bytes) + (documents > 1 ? documentCost * documents : TimeSpan.Zero);
                        completions.Enqueue((now, bytes, documents), done);
                        inFlight++;
                    }
                    if (!completions.TryPeek(out var read, out var at) || at > tickEnd)
                    {
                        break;
                    }
                    completions.Dequeue();
                    inFlight--;
                    now = at;
                    tickReads.Add(new ReadSample(read.Bytes, read.Documents, at - read.Issued));
                }
                now = tickEnd;
                ticks.Add((tickEnd, tickReads.ToArray()));
                tickReads.Clear();
            }
            return ticks;
        }
    }
}
