using System.Diagnostics;

namespace Indexing.Storage;

/// <summary>Latency percentiles over a recent window; <see cref="Count"/> is 0 and all times zero when nothing was recorded.</summary>
/// <param name="Count">How many latencies the window holds.</param>
/// <param name="P50">Median: the largest value its bucket holds (exact below 6.4 us), at most <paramref name="Max"/>.</param>
/// <param name="P90">90th percentile, reported like <paramref name="P50"/>.</param>
/// <param name="P99">99th percentile, reported like <paramref name="P50"/>.</param>
/// <param name="Max">Largest latency recorded in the window, exact.</param>
internal readonly record struct LatencySummary(long Count, TimeSpan P50, TimeSpan P90, TimeSpan P99, TimeSpan Max);

/// <summary>
/// Records foreground read latencies from any number of threads and answers percentiles over
/// the last seconds, so the prefetcher can back off when a rebuild slows live reads.
/// </summary>
/// <remarks>
/// <para>
/// Buckets are log-linear over <see cref="TimeSpan"/> ticks (100 ns): one per tick below 64
/// ticks (6.4 us), then 32 per power of two, so a bucket is at most 1/32 as wide as its lower
/// edge (<see cref="LogLinearBuckets"/> does the maths). Values from 60 s up share the top bucket; <see cref="LatencySummary.Max"/> stays exact.
/// A percentile reports the largest value its bucket holds, never more than the observed max:
/// below 6.4 us that is the value itself (to the tick), and up to 60 s it errs high by less than 1/32 (3.125%),
/// never low. Sub-microsecond buckets matter because block-cache Gets take a few microseconds,
/// where whole-microsecond buckets reported 1 us as 2 us: enough to cross a 1.3x target.
/// </para>
/// <para>
/// A ring of one-second slots holds the counts, keyed by whole seconds of the
/// <see cref="TimeProvider"/>'s monotonic timestamp. A slot is cleared lazily by the first
/// record of a new second that maps to it; records arriving during that clear wait for it.
/// Recording is lock-free otherwise: one interlocked increment, plus a compare-and-swap when
/// a new maximum is seen. Counts are only ever incremented or cleared, so they cannot go
/// negative; a record can only go astray if its thread stalls for a whole turn of the ring
/// (64 s) between reading the clock and counting, in which case it is dropped or counted in
/// the newer second.
/// </para>
/// </remarks>
internal sealed class LatencyHistogram
{
    private const int SubBucketBits = 5;
    private const long TopTicks = 60 * TimeSpan.TicksPerSecond;

    // More slots than the longest window, so a snapshot reading the oldest second of its window
    // does not race that slot being cleared for a new second unless the snapshot takes seconds.
    private const int SlotCount = 64;

    // Declared before BucketCount, whose initializer uses it.
    private static readonly LogLinearBuckets _buckets = new(SubBucketBits);

    private static readonly double _ticksPerStopwatchTick = (double)TimeSpan.TicksPerSecond / Stopwatch.Frequency;

    private readonly TimeProvider _timeProvider;
    private readonly long _timestampsPerSecond;
    private readonly Slot[] _slots = new Slot[SlotCount];

    /// <summary>Creates an empty histogram reading time from <paramref name="timeProvider"/> (default: the system clock).</summary>
    public LatencyHistogram(TimeProvider? timeProvider = null)
    {
        _timeProvider = timeProvider ?? TimeProvider.System;
        _timestampsPerSecond = _timeProvider.TimestampFrequency;
        for (var i = 0; i < _slots.Length; i++)
        {
            _slots[i] = new Slot();
        }
    }

    /// <summary>The longest window <see cref="Snapshot"/> accepts: 60 seconds.</summary>
    public static TimeSpan MaxWindow { get; } = TimeSpan.FromSeconds(60);

    internal static int BucketCount { get; } = _buckets.CountUpTo(TopTicks);

    /// <summary>Records one latency; a negative one (a clock quirk) counts as zero rather than throwing.</summary>
    public void Record(TimeSpan elapsed) => RecordTimeSpanTicks(elapsed.Ticks);

    /// <summary>Records one latency measured in <see cref="Stopwatch"/> ticks (<see cref="Stopwatch.GetTimestamp"/> differences).</summary>
    public void RecordTicks(long stopwatchTicks) => RecordTimeSpanTicks((long)(stopwatchTicks * _ticksPerStopwatchTick));

    /// <summary>Percentiles over the current second and the ones before it, <paramref name="window"/> rounded up to whole seconds.</summary>
    /// <remarks>The current second is still filling, so a window of N seconds holds between N-1 and N seconds of records.</remarks>
    public LatencySummary Snapshot(TimeSpan window)
    {
        if (window <= TimeSpan.Zero || window > MaxWindow)
        {
            throw new ArgumentOutOfRangeException(
                nameof(window),
                window,
                $"window is {window}; it must be more than zero and at most {MaxWindow.TotalSeconds:0} s, the history this histogram keeps. Pass a window in that range.");
        }

        var seconds = (window.Ticks + TimeSpan.TicksPerSecond - 1) / TimeSpan.TicksPerSecond;
        var now = CurrentSecond();
        Span<long> merged = stackalloc long[BucketCount];
        long count = 0;
        long maxTicks = 0;
        for (var second = now - seconds + 1; second <= now; second++)
        {
            var slot = SlotFor(second);
            if (slot.Second == second)
            {
                count += slot.AddCountsTo(merged);
                maxTicks = Math.Max(maxTicks, slot.MaxTicks);
            }
        }

        if (count == 0)
        {
            return default;
        }

        Span<TimeSpan> percentiles = stackalloc TimeSpan[3];
        ReadOnlySpan<double> fractions = [0.50, 0.90, 0.99];
        var next = 0;
        long seen = 0;
        // Every rank is at most count, the sum of merged, so the walk reaches all three.
        for (var bucket = 0; next < fractions.Length; bucket++)
        {
            seen += merged[bucket];
            while (next < fractions.Length && seen >= Rank(fractions[next], count))
            {
                var largestInBucket = BucketLimitTicks(bucket) - 1;
                percentiles[next++] = TimeSpan.FromTicks(Math.Min(largestInBucket, maxTicks));
            }
        }

        return new LatencySummary(count, percentiles[0], percentiles[1], percentiles[2], TimeSpan.FromTicks(maxTicks));
    }

    /// <summary>Bucket of a latency in <see cref="TimeSpan"/> ticks; values from 60 s up share the top bucket.</summary>
    internal static int BucketIndex(long ticks) => _buckets.IndexOf(Math.Clamp(ticks, 0, TopTicks));

    /// <summary>Exclusive upper edge of a bucket, in <see cref="TimeSpan"/> ticks.</summary>
    internal static long BucketLimitTicks(int index) => _buckets.UpperBound(index) + 1;

    private static long Rank(double fraction, long count) => Math.Max(1, (long)Math.Ceiling(fraction * count));

    private void RecordTimeSpanTicks(long ticks)
    {
        ticks = Math.Max(ticks, 0);
        var second = CurrentSecond();
        var slot = SlotFor(second);
        if (slot.Claim(second))
        {
            slot.Add(ticks);
        }
    }

    private long CurrentSecond() => _timeProvider.GetTimestamp() / _timestampsPerSecond;

    private Slot SlotFor(long second) => _slots[(int)(second & (SlotCount - 1))];

    private sealed class Slot
    {
        private const long Unused = long.MinValue;
        private const long Clearing = long.MinValue + 1;

        private readonly long[] _counts = new long[BucketCount];
        private long _second = Unused;
        private long _maxTicks;

        public long Second => Volatile.Read(ref _second);

        public long MaxTicks => Volatile.Read(ref _maxTicks);

        // Makes the slot hold `second`, clearing what an older second left. False when the
        // slot already holds a later second: the caller stalled a whole turn of the ring.
        public bool Claim(long second)
        {
            var spin = new SpinWait();
            while (true)
            {
                var current = Volatile.Read(ref _second);
                if (current == second)
                {
                    return true;
                }

                if (current == Clearing)
                {
                    spin.SpinOnce();
                }
                else if (current > second)
                {
                    return false;
                }
                else if (Interlocked.CompareExchange(ref _second, Clearing, current) == current)
                {
                    Array.Clear(_counts);
                    Volatile.Write(ref _maxTicks, 0);
                    Volatile.Write(ref _second, second);
                    return true;
                }
            }
        }

        public void Add(long ticks)
        {
            // Max first, so a snapshot that sees the count also sees a max at least this large.
            long max;
            while (ticks > (max = Volatile.Read(ref _maxTicks))
                && Interlocked.CompareExchange(ref _maxTicks, ticks, max) != max)
            {
            }

            Interlocked.Increment(ref _counts[BucketIndex(ticks)]);
        }

        public long AddCountsTo(Span<long> merged)
        {
            long total = 0;
            for (var i = 0; i < _counts.Length; i++)
            {
                var count = Interlocked.Read(ref _counts[i]);
                merged[i] += count;
                total += count;
            }

            return total;
        }
    }
}
