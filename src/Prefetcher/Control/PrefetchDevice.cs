using System.Collections.Concurrent;

namespace Indexing.Prefetcher;

/// <summary>
/// What one device has taught the adaptive prefetches that read it, kept for the engine's lifetime
/// (docs/decisions/0015): the L a prefetch reading it alone settled at (a plateau: its neighbours did
/// not pay) with the rate per stream there, so that the next prefetch starts there instead of probing
/// up from L=2; and which adaptive prefetches read it now, so that together they run about one
/// device's L, not one each: while n read it, each is capped at its share, the remembered L over n
/// (rounded up; with nothing remembered, the controller's maximum over n). A prefetch records only
/// while it reads the device alone: a shared L is a share, not the device's knee.
/// Threading: any thread; each call is short and under one lock.
/// </summary>
internal sealed class PrefetchDevice(string name)
{
    private readonly Lock _lock = new();
    private int _readers;
    private RememberedConcurrency? _remembered;

    /// <summary>How the device is named: the store's directory, and the modelled disk in front of it if any.</summary>
    public string Name { get; } = name;

    /// <summary>What the last prefetch that settled reading this device alone settled at; null until one has.</summary>
    public RememberedConcurrency? Remembered
    {
        get
        {
            lock (_lock)
            {
                return _remembered;
            }
        }
    }

    /// <summary>Adaptive prefetches reading the device now.</summary>
    public int Readers
    {
        get
        {
            lock (_lock)
            {
                return _readers;
            }
        }
    }

    /// <summary>An adaptive prefetch starts reading the device; dispose the lease when it stops (idempotent).</summary>
    public IDisposable Join()
    {
        lock (_lock)
        {
            _readers++;
        }

        return new Lease(this);
    }

    /// <summary>
    /// The most readers one prefetch may run while others read the device too: the remembered L (or
    /// <paramref name="maxConcurrency"/>) over the prefetches reading it, rounded up, at least 1;
    /// null while one reads it alone.
    /// </summary>
    public int? Share(int maxConcurrency)
    {
        lock (_lock)
        {
            if (_readers <= 1)
            {
                return null;
            }

            var whole = _remembered?.Concurrency ?? maxConcurrency;
            return Math.Max(1, (whole + _readers - 1) / _readers);
        }
    }

    /// <summary>
    /// A prefetch settled at <paramref name="concurrency"/> with <paramref name="streamBytesPerSecond"/>
    /// per stream; kept only if it reads the device alone. Returns whether it was kept.
    /// </summary>
    public bool Remember(int concurrency, double? streamBytesPerSecond)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(concurrency, 1);
        lock (_lock)
        {
            if (_readers > 1)
            {
                return false;
            }

            _remembered = new RememberedConcurrency(concurrency, streamBytesPerSecond is > 0 and < double.PositiveInfinity ? streamBytesPerSecond : _remembered?.StreamBytesPerSecond);
            return true;
        }
    }

    private void Leave()
    {
        lock (_lock)
        {
            _readers--;
        }
    }

    private sealed class Lease(PrefetchDevice device) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                device.Leave();
            }
        }
    }
}

/// <summary>Where a prefetch reading a device alone settled: its L and the bytes per second one stream read there (null: not measured).</summary>
internal sealed record RememberedConcurrency(int Concurrency, double? StreamBytesPerSecond)
{
    public override string ToString() =>
        StreamBytesPerSecond is { } rate ? $"L={Concurrency} at {ControlText.Rate(rate)} a stream" : $"L={Concurrency}";
}

/// <summary>
/// The devices an engine's prefetches read, by name (<see cref="Prefetch.Start"/> names one by the
/// store's directory, and the modelled disk in front of it if any: that is a device of its own).
/// </summary>
internal sealed class PrefetchDevices
{
    private readonly ConcurrentDictionary<string, PrefetchDevice> _devices = new(StringComparer.Ordinal);

    public PrefetchDevice For(string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return _devices.GetOrAdd(name, static key => new PrefetchDevice(key));
    }
}
