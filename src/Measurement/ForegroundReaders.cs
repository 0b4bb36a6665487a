using System.Diagnostics;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Measurement;

// The live-traffic load: a fixed number of closed-loop readers, each doing a Get on a random id,
// pausing ThinkTime, and again. On the modelled network disk each Get then pays the model's delay
// for the document's size through the same NetworkDiskModel instance the rebuild reads through,
// so both queue for the same slots and prefetch pressure can hurt the foreground.
//
// Threads: one dedicated thread per reader (the Get and the model's Read block). Every latency is
// recorded twice: into Latency, the histogram the adaptive prefetcher watches as its foreground
// signal (so on the modelled disk it sees the delay the users see), and into an exact per-phase
// list that Drain() hands over, from which p50/p99 per phase and per timeline interval come.
internal sealed class ForegroundReaders : IDisposable
{
    private static readonly TimeSpan ThinkTime = TimeSpan.FromMilliseconds(1);

    private readonly DocumentStore _store;
    private readonly IReadOnlyList<string> _ids;
    private readonly NetworkDiskModel? _disk;
    private readonly CancellationTokenSource _stop = new();
    private readonly Thread[] _threads;
    private readonly Lock _gate = new();
    private List<(long At, long Ticks)> _samples = [];
    private Exception? _failure;
    private int _disposed;

    public ForegroundReaders(DocumentStore store, IReadOnlyList<string> ids, int readers, NetworkDiskModel? disk)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(readers, 1);
        if (ids.Count == 0)
        {
            throw new ArgumentException("the foreground load needs at least one document id to read.", nameof(ids));
        }

        _store = store;
        _ids = ids;
        _disk = disk;
        _threads = new Thread[readers];
        for (var i = 0; i < readers; i++)
        {
            var seed = 1000 + i;
            _threads[i] = new Thread(() => ReadLoop(seed)) { IsBackground = true, Name = $"foreground reader {i}" };
            _threads[i].Start();
        }
    }

    /// <summary>The latency every Get took (modelled delay included); the adaptive prefetcher's foreground signal.</summary>
    public LatencyHistogram Latency { get; } = new();

    /// <summary>Takes the samples recorded since the previous call: (Stopwatch timestamp at completion, Stopwatch ticks taken).</summary>
    public List<(long At, long Ticks)> Drain()
    {
        lock (_gate)
        {
            ThrowIfFailed();
            var taken = _samples;
            _samples = [];
            return taken;
        }
    }

    public static ForegroundLatency? Summarise(List<(long At, long Ticks)> samples)
    {
        if (samples.Count == 0)
        {
            return null;
        }

        var ticks = samples.Select(s => s.Ticks).Order().ToArray();
        return new ForegroundLatency(ticks.Length, Stopwatch.GetElapsedTime(0, Percentile(ticks, 0.50)), Stopwatch.GetElapsedTime(0, Percentile(ticks, 0.99)));
    }

    public static long Percentile(long[] sorted, double quantile) =>
        sorted[Math.Min(sorted.Length - 1, (int)Math.Ceiling(quantile * sorted.Length) - 1)];

    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        _stop.Cancel();
        foreach (var thread in _threads)
        {
            // Hang guard: a reader finishes its current Get (milliseconds) and sees the stop.
            if (!thread.Join(TimeSpan.FromSeconds(30)))
            {
                throw new TimeoutException($"foreground reader {MessageText.Quote(thread.Name ?? "?")} did not stop within 30 s.");
            }
        }

        _stop.Dispose();
    }

    private void ReadLoop(int seed)
    {
        var random = new Random(seed);
        var token = _stop.Token;
        try
        {
            while (!token.IsCancellationRequested)
            {
                var started = Stopwatch.GetTimestamp();
                var document = _store.Get(_ids[random.Next(_ids.Count)]);
                if (_disk is not null && document is { } found)
                {
                    _disk.Read(found.Body.Length, token);
                }

                var now = Stopwatch.GetTimestamp();
                Latency.RecordTicks(now - started);
                lock (_gate)
                {
                    _samples.Add((now, now - started));
                }

                token.WaitHandle.WaitOne(ThinkTime);
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // stopping while waiting on the modelled disk
        }
        catch (Exception exception)
        {
            // Reported by the next Drain: a load that silently stopped would flatter the rebuild.
            lock (_gate)
            {
                _failure ??= exception;
            }
        }
    }

    private void ThrowIfFailed()
    {
        if (_failure is not null)
        {
            throw new InvalidOperationException($"a foreground reader failed: {_failure.Message}", _failure);
        }
    }
}
