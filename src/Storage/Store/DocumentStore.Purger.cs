using RocksDbSharp;

namespace Indexing.Storage;

// The tombstone purger's thread and the watermarks it reads. Whoever owns the indexes registers a
// watermark; the thread starts with the first registration, runs a purge round (.Tombstones.cs)
// every TombstonePurgeInterval, and is stopped before the database closes.
internal sealed partial class DocumentStore
{
    private readonly Lock _purgerLifecycle = new();
    private readonly List<WatermarkRegistration> _watermarks = [];
    private readonly CancellationTokenSource _purgerStop = new();
    private Thread? _purger;
    private bool _purgerStopped;

    /// <summary>
    /// Registers a low watermark for tombstone cleanup: <paramref name="lowWatermark"/> returns an
    /// etag at or below which no reader will ever read the change feed again (every index has
    /// durably applied those changes, and no rebuild will catch up from below it). Tombstones at or
    /// below the lowest registered watermark are purged in the background, every
    /// <see cref="StoreOptions.TombstonePurgeInterval"/>. Without a registration nothing is purged.
    /// Dispose the result to unregister; it may be called on the purge thread at any time until then,
    /// never under a lock of the store, and must not block for long.
    /// </summary>
    public IDisposable RegisterTombstoneWatermark(Func<long> lowWatermark)
    {
        ArgumentNullException.ThrowIfNull(lowWatermark);
        ObjectDisposedException.ThrowIf(_gate.IsClosed, this);
        var registration = new WatermarkRegistration(this, lowWatermark);
        lock (_watermarks)
        {
            _watermarks.Add(registration);
        }

        StartPurger();
        return registration;
    }

    // The lowest registered watermark, or null with none registered. Called outside every lock of
    // the store: a provider may take its own locks.
    private long? ReadWatermark()
    {
        WatermarkRegistration[] registered;
        lock (_watermarks)
        {
            registered = [.. _watermarks];
        }

        long? lowest = null;
        foreach (var registration in registered)
        {
            var watermark = registration.Read();
            lowest = lowest is { } low ? Math.Min(low, watermark) : watermark;
        }

        return lowest is { } value ? Math.Max(0, value) : null;
    }

    private void StartPurger()
    {
        lock (_purgerLifecycle)
        {
            if (_purger is not null || _purgerStopped)
            {
                return;
            }

            // A thread of its own: its RocksDB calls block (a compaction for seconds).
            _purger = new Thread(PurgeLoop) { IsBackground = true, Name = "tombstone purge", Priority = ThreadPriority.BelowNormal };
            _purger.Start();
        }
    }

    // Before the database closes: stops the purger and waits for it. A manual compaction in progress
    // is cancelled (RocksDB's DisableManualCompaction); a batch in progress ends (milliseconds).
    private void StopPurger()
    {
        Thread? purger;
        lock (_purgerLifecycle)
        {
            if (_purgerStopped)
            {
                return;
            }

            _purgerStopped = true;
            purger = _purger;
        }

        _purgerStop.Cancel();
        if (purger is not null)
        {
            if (_gate.TryEnter())
            {
                try
                {
                    Native.Instance.rocksdb_disable_manual_compaction(_db.Handle);
                }
                finally
                {
                    _gate.Exit();
                }
            }

            purger.Join();
        }

        _purgerStop.Dispose();
    }

    private void PurgeLoop()
    {
        var stop = _purgerStop.Token;
        while (!stop.WaitHandle.WaitOne(Options.TombstonePurgeInterval))
        {
            try
            {
                PurgeTombstones(stop);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // The next round tries again; the status shows why this one failed.
                Volatile.Write(ref _purgeError, $"{DateTimeOffset.UtcNow:u} {e.GetType().Name}: {e.Message}");
            }
        }
    }

    // One registered watermark; Dispose unregisters it (idempotent, never blocks).
    private sealed class WatermarkRegistration(DocumentStore store, Func<long> read) : IDisposable
    {
        public long Read() => read();

        public void Dispose()
        {
            lock (store._watermarks)
            {
                store._watermarks.Remove(this);
            }
        }
    }
}
