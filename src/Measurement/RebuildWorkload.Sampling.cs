using System.Collections.Immutable;
using System.Diagnostics;
using Indexing.Prefetcher;

namespace Indexing.Measurement;

public sealed partial class RebuildWorkload
{
    // A run's timeline: every SampleInterval, the prefetcher's pressure (limit, bytes done, consumer
    // wait, in flight + buffered), the process working set (its peak is the run's peak RSS: the
    // pressure record does not know the indexer's memory) and the foreground Gets completed in the
    // interval. Its own task, stopped before the figures are read; pressure is one field read.
    // The prefetcher publishes its pressure at its own ticks (250 ms, jittered), so a point's rates
    // are over the interval between the snapshots it compares, at the time the newer one was
    // published, and a sample that finds no new snapshot adds no point. Against this loop's clock, a
    // snapshot read twice showed an interval in which nothing moved and the next one two ticks'
    // worth (0 MB/s and no wait, then 100% wait), which looked like the process stopping.
    private sealed class RunSampler : IAsyncDisposable
    {
        private readonly IBatchSource? _source;
        private readonly ForegroundReaders? _readers;
        private readonly CancellationTokenSource _stop = new();
        private readonly List<RebuildTimelinePoint> _points = [];
        private readonly List<(long At, long Ticks)> _foreground = [];
        private readonly long _started = Stopwatch.GetTimestamp();
        private readonly GarbageCollections _gcAtStart = GarbageCollections.Now();
        private readonly Task _loop;
        private long _lastBytesDone;
        private TimeSpan _lastWait;
        private TimeSpan _lastElapsed;

        // The prefetcher's clock (PrefetchPressure.Elapsed) at the snapshot the last point came from.
        private TimeSpan _lastPublished;
        private int _stopped;

        public RunSampler(IBatchSource? source, ForegroundReaders? readers)
        {
            _source = source;
            _readers = readers;
            PeakWorkingSetBytes = Environment.WorkingSet;
            _loop = Task.Run(LoopAsync);
        }

        public long PeakWorkingSetBytes { get; private set; }

        /// <summary>The foreground Gets completed while sampling (available after <see cref="StopAsync"/>).</summary>
        public ForegroundLatency? ForegroundDuringRun { get; private set; }

        /// <summary>The process's garbage collections while sampling (available after <see cref="StopAsync"/>).</summary>
        public GarbageCollections? CollectionsDuringRun { get; private set; }

        /// <summary>Stops sampling, takes one last sample, and returns the timeline.</summary>
        public async Task<ImmutableArray<RebuildTimelinePoint>> StopAsync()
        {
            if (Interlocked.Exchange(ref _stopped, 1) == 0)
            {
                await _stop.CancelAsync().ConfigureAwait(false);
                await _loop.ConfigureAwait(false);
                Sample();
                CollectionsDuringRun = GarbageCollections.Now() - _gcAtStart;
                ForegroundDuringRun = ForegroundReaders.Summarise(_foreground);
            }

            return [.. _points];
        }

        public async ValueTask DisposeAsync()
        {
            await StopAsync().ConfigureAwait(false);
            _stop.Dispose();
        }

        private async Task LoopAsync()
        {
            using var timer = new PeriodicTimer(SampleInterval);
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

        private void Sample()
        {
            PeakWorkingSetBytes = Math.Max(PeakWorkingSetBytes, Environment.WorkingSet);
            var pressure = _source?.Pressure;
            var elapsed = Stopwatch.GetElapsedTime(_started);
            if (pressure is not null)
            {
                // When the snapshot was published, on this clock (it is at most a tick old).
                elapsed -= TimeSpan.FromTicks(Math.Max(0, (DateTimeOffset.UtcNow - pressure.Timestamp).Ticks));
            }

            var interval = pressure is null ? elapsed - _lastElapsed : pressure.Elapsed - _lastPublished;
            if (interval <= TimeSpan.Zero || elapsed <= _lastElapsed)
            {
                return;
            }

            TimeSpan? foregroundP99 = null;
            if (_readers is not null)
            {
                var recent = _readers.Drain();
                _foreground.AddRange(recent);
                foregroundP99 = ForegroundReaders.Summarise(recent)?.P99;
            }

            var bytesDone = pressure?.BytesDone ?? 0;
            var wait = pressure?.ConsumerWaitTime ?? TimeSpan.Zero;
            _points.Add(new RebuildTimelinePoint(
                elapsed,
                pressure?.ConcurrencyLimit ?? 0,
                (bytesDone - _lastBytesDone) / 1e6 / interval.TotalSeconds,
                Math.Clamp((wait - _lastWait) / interval * 100, 0, 100),
                (pressure?.InFlightBytes ?? 0) + (pressure?.BufferedBytes ?? 0),
                foregroundP99));
            _lastBytesDone = bytesDone;
            _lastWait = wait;
            _lastElapsed = elapsed;
            _lastPublished = pressure?.Elapsed ?? TimeSpan.Zero;
        }
    }
}
