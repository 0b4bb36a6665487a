extern alias server;

using System.Diagnostics;
using System.Globalization;
using Indexing.Indexer;
using server::Indexing.Server.Admin;
using server::Indexing.Server.Hosting;
using Indexing.Storage;

namespace Indexing.Lab.Soak;

/// <summary>
/// The scale run's one-second samples: the process's memory (<see cref="ProcessMemory"/>), the rebuild's
/// progress, the foreground Gets of the last second (p99, block cache and row cache hit rates) and the
/// load average, each labelled with the run's phase. Its own task, stopped before the report is made.
/// </summary>
internal sealed class SoakRecorder : IAsyncDisposable
{
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    private readonly ServerHost _host;
    private readonly string _indexName;
    private readonly List<SoakSample> _samples = [];
    private readonly Lock _lock = new();
    private readonly long _started = Stopwatch.GetTimestamp();
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;
    private SoakStage _stage = SoakStage.Load;
    private int? _generationBefore;
    private MemorySample? _previous;
    private int _stopped;

    public SoakRecorder(ServerHost host, string indexName)
    {
        _host = host;
        _indexName = indexName;
        _loop = Task.Run(LoopAsync);
    }

    /// <summary>Moves the run to <paramref name="stage"/>; entering <see cref="SoakStage.SideBySide"/> notes the rebuild generation that ran before it.</summary>
    public void Enter(SoakStage stage)
    {
        lock (_lock)
        {
            _stage = stage;
            if (stage == SoakStage.SideBySide)
            {
                _generationBefore = Rebuild()?.Generation;
            }
        }
    }

    public IReadOnlyList<SoakSample> Samples
    {
        get
        {
            lock (_lock)
            {
                return [.. _samples];
            }
        }
    }

    /// <summary>Stops sampling after one last sample; returns them all.</summary>
    public async Task<IReadOnlyList<SoakSample>> StopAsync()
    {
        if (Interlocked.Exchange(ref _stopped, 1) == 0)
        {
            await _stop.CancelAsync().ConfigureAwait(false);
            await _loop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            Sample();
        }

        return Samples;
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync().ConfigureAwait(false);
        _stop.Dispose();
    }

    private async Task LoopAsync()
    {
        using var timer = new PeriodicTimer(Interval);
        try
        {
            while (await timer.WaitForNextTickAsync(_stop.Token).ConfigureAwait(false))
            {
                Sample();
            }
        }
        catch (OperationCanceledException) when (_stop.IsCancellationRequested)
        {
            // stopped
        }
    }

    /// <summary>The first sample that failed, and why (type and message); null while none has. Sampling goes on after one.</summary>
    public string? FirstError { get; private set; }

    private void Sample()
    {
        try
        {
            SampleNow();
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // One bad second must not end the run's timeline; the report says it happened.
            lock (_lock)
            {
                FirstError ??= $"{Stopwatch.GetElapsedTime(_started).TotalSeconds:0.0} s: {e.GetType().Name}: {e.Message}";
            }
        }
    }

    private void SampleNow()
    {
        var memory = ProcessMemory.Read(Stopwatch.GetElapsedTime(_started), _host.Engine.GetMemory());
        var gets = _host.Engine.Store.ForegroundReadLatency.Snapshot(Interval);
        var rebuild = Rebuild();
        lock (_lock)
        {
            var phase = _stage switch
            {
                SoakStage.SideBySide when rebuild is null || rebuild.Generation == _generationBefore => "before",
                SoakStage.SideBySide when rebuild.IsFinished => "verify",
                SoakStage.SideBySide => rebuild.Phase switch
                {
                    RebuildPhase.Queued => "queued",
                    RebuildPhase.Bulk => "bulk",
                    RebuildPhase.CatchUp => "catch-up",
                    _ => "swap",
                },
                SoakStage.InitialBuild => "initial build",
                SoakStage.After => "after",
                _ => "load",
            };
            var sideBySide = _stage == SoakStage.SideBySide && rebuild is not null && rebuild.Generation != _generationBefore;
            var previous = _previous ?? memory;
            _samples.Add(new SoakSample(
                memory.Elapsed,
                phase,
                memory,
                sideBySide ? RebuildFraction(rebuild!) : null,
                sideBySide && !rebuild!.IsFinished ? rebuild.Prefetch?.MegabytesPerSecondLastSecond : null,
                gets.Count,
                gets.Count > 0 ? gets.P99 : null,
                memory.Store.ForegroundBlockCache.Since(previous.Store.ForegroundBlockCache),
                memory.Store.RowCache.Since(previous.Store.RowCache),
                LoadAverage()));
            _previous = memory;
        }
    }

    // Bytes done over the run's total, once the total is known (the prefetcher's census, or a bulk
    // phase already over): over the partial plan of the first moments it would reach the 50% mark the
    // report judges flatness from within seconds of the start.
    private static double? RebuildFraction(RebuildProgress rebuild) =>
        rebuild.IsFinished ? 1
        : rebuild.Phase == RebuildPhase.Bulk && rebuild.Prefetch?.BytesTotal is null ? null
        : rebuild.BytesTotal > 0 ? Math.Min(1, (double)rebuild.BytesDone / rebuild.BytesTotal) : 0;

    private RebuildProgress? Rebuild()
    {
        try
        {
            return _host.Engine.GetRebuild(_indexName);
        }
        catch (IndexNotFoundException)
        {
            return null;
        }
    }

    // The one-minute load average (/proc/loadavg); null where there is none.
    internal static double? LoadAverage()
    {
        if (!OperatingSystem.IsLinux())
        {
            return null;
        }

        var first = File.ReadAllText("/proc/loadavg").Split(' ')[0];
        return double.TryParse(first, NumberStyles.Float, CultureInfo.InvariantCulture, out var load) ? load : null;
    }
}

/// <summary>Where the scale run is; the recorder labels each sample from it (and from the rebuild's own phase).</summary>
internal enum SoakStage
{
    Load,
    InitialBuild,
    SideBySide,
    After,
}

/// <summary>One second of the scale run.</summary>
/// <param name="Elapsed">Since the run started.</param>
/// <param name="Phase">load, initial build, before, bulk, catch-up, swap, verify or after.</param>
/// <param name="Memory">The process's memory now.</param>
/// <param name="RebuildFraction">The side-by-side rebuild's bytes done over its total (1 once finished); null outside it.</param>
/// <param name="RebuildMegabytesPerSecond">The bulk phase's MB/s over the last second; null outside it.</param>
/// <param name="ForegroundGets">Foreground Gets completed in the last second.</param>
/// <param name="ForegroundP99">Their p99; null with none.</param>
/// <param name="ForegroundBlockCache">Block cache hits and misses of the foreground Gets in the last second.</param>
/// <param name="RowCache">Row cache hits and misses in the last second.</param>
/// <param name="LoadAverage">The one-minute load average.</param>
internal sealed record SoakSample(
    TimeSpan Elapsed,
    string Phase,
    MemorySample Memory,
    double? RebuildFraction,
    double? RebuildMegabytesPerSecond,
    long ForegroundGets,
    TimeSpan? ForegroundP99,
    CacheHits ForegroundBlockCache,
    CacheHits RowCache,
    double? LoadAverage);
