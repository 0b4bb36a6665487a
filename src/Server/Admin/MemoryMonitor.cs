using System.Diagnostics;
using Indexing.Engine;

namespace Indexing.Server.Admin;

/// <summary>
/// The server's memory over the last ten minutes: a <see cref="MemorySample"/> every second, kept in a
/// ring, for the admin page's chart (<c>GET /admin/memory</c>) and the <c>/metrics</c> gauges.
/// <para>Threading: its own loop writes; readers take the ring under a lock (600 references at most).</para>
/// </summary>
internal sealed class MemoryMonitor : IAsyncDisposable
{
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);
    public const int Capacity = 600;

    private readonly IndexingEngine _engine;
    private readonly long _started = Stopwatch.GetTimestamp();
    private readonly Queue<MemorySample> _ring = new(Capacity);
    private readonly Lock _lock = new();
    private readonly CancellationTokenSource _stop = new();
    private readonly Task _loop;
    private MemorySample? _latest;
    private string? _lastError;
    private EngineMemory? _engineMemory;
    private int _disposed;

    public MemoryMonitor(IndexingEngine engine)
    {
        _engine = engine;
        _engineMemory = engine.GetMemory();
        Bound = MemoryBound.For(engine.Options.Storage, _engineMemory);
        Sample();
        _loop = Task.Run(LoopAsync);
    }

    /// <summary>The most the process should hold (docs/architecture.md, "Memory bound"), for these settings.</summary>
    public MemoryBound Bound { get; }

    /// <summary>The newest sample (there is always one: the first is taken at construction).</summary>
    public MemorySample Latest => Volatile.Read(ref _latest)!;

    /// <summary>Why the last sample failed, if it did (the store closing under it, say); null once one succeeds.</summary>
    public string? LastError => Volatile.Read(ref _lastError);

    /// <summary>Which malloc the process allocates with (the engine's reading).</summary>
    public string Malloc => Volatile.Read(ref _engineMemory)!.Malloc;

    /// <summary>The RocksDB native library loaded.</summary>
    public string? RocksDbLibraryPath => Volatile.Read(ref _engineMemory)!.RocksDbLibraryPath;

    /// <summary>The samples newer than <paramref name="after"/> (all with null), oldest first.</summary>
    public IReadOnlyList<MemorySample> History(TimeSpan? after = null)
    {
        lock (_lock)
        {
            return after is { } since ? [.. _ring.Where(s => s.Elapsed > since)] : [.. _ring];
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stop.CancelAsync().ConfigureAwait(false);
        await _loop.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
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

    private void Sample()
    {
        MemorySample sample;
        try
        {
            var memory = _engine.GetMemory();
            sample = ProcessMemory.Read(Stopwatch.GetElapsedTime(_started), memory);
            Volatile.Write(ref _engineMemory, memory);
        }
        catch (Exception e) when (e is ObjectDisposedException or IOException or IndexingException)
        {
            // Shutting down, or /proc unreadable for a moment: keep the last sample, say why.
            Volatile.Write(ref _lastError, e.Message);
            return;
        }

        lock (_lock)
        {
            if (_ring.Count == Capacity)
            {
                _ring.Dequeue();
            }

            _ring.Enqueue(sample);
        }

        Volatile.Write(ref _latest, sample);
        Volatile.Write(ref _lastError, null);
    }
}
