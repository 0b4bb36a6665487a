using RocksDbSharp;

namespace Indexing.Storage;

/// <summary>
/// The registered low watermarks of a <see cref="DocumentStore"/> and the background thread that
/// purges tombstones below the lowest (<see cref="TombstonePurger"/>). Whoever owns the indexes
/// registers a watermark; the thread starts with the first registration, runs a purge round every
/// <see cref="StoreOptions.TombstonePurgeInterval"/>, and is stopped before the database closes.
/// </summary>
/// <remarks>
/// Threading: registrations come and go from any thread (a lock over the list); the thread's start
/// and stop are serialised by a lock of their own. Watermarks are read outside every lock of the
/// store: a provider may take its own locks.
/// </remarks>
internal sealed class TombstonePurgeThread(DocumentStore store, TombstonePurger purger)
{
    private readonly Lock _lifecycle = new();
    private readonly List<Registration> _watermarks = [];
    private readonly CancellationTokenSource _stop = new();
    private Thread? _thread;
    private bool _stopped;

    /// <summary>Registers a low watermark (see <see cref="DocumentStore.RegisterTombstoneWatermark"/>) and starts the thread if it is not running.</summary>
    public IDisposable Register(Func<long> lowWatermark)
    {
        var registration = new Registration(this, lowWatermark);
        lock (_watermarks)
        {
            _watermarks.Add(registration);
        }

        Start();
        return registration;
    }

    /// <summary>The lowest registered watermark, or null with none registered.</summary>
    public long? ReadWatermark()
    {
        Registration[] registered;
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

    /// <summary>
    /// Before the database closes: stops the thread and waits for it. A manual compaction in progress
    /// is cancelled (RocksDB's DisableManualCompaction); a batch in progress ends (it is short).
    /// Idempotent; no thread starts afterwards.
    /// </summary>
    public void Stop()
    {
        Thread? thread;
        lock (_lifecycle)
        {
            if (_stopped)
            {
                return;
            }

            _stopped = true;
            thread = _thread;
        }

        _stop.Cancel();
        if (thread is not null)
        {
            if (store.Gate.TryEnter())
            {
                try
                {
                    Native.Instance.rocksdb_disable_manual_compaction(store.Db.Handle);
                }
                finally
                {
                    store.Gate.Exit();
                }
            }

            thread.Join();
        }

        _stop.Dispose();
    }

    private void Start()
    {
        lock (_lifecycle)
        {
            if (_thread is not null || _stopped)
            {
                return;
            }

            // A thread of its own: its RocksDB calls block (a compaction for seconds).
            _thread = new Thread(Loop) { IsBackground = true, Name = "tombstone purge", Priority = ThreadPriority.BelowNormal };
            _thread.Start();
        }
    }

    private void Loop()
    {
        var stop = _stop.Token;
        while (!stop.WaitHandle.WaitOne(store.Options.TombstonePurgeInterval))
        {
            try
            {
                purger.Purge(ReadWatermark, stop);
            }
            catch (OperationCanceledException) when (stop.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                // The next round tries again; the status shows why this one failed.
                purger.RecordError($"{DateTimeOffset.UtcNow:u} {e.GetType().Name}: {e.Message}");
            }
        }
    }

    // One registered watermark; Dispose unregisters it (idempotent, never blocks).
    private sealed class Registration(TombstonePurgeThread owner, Func<long> read) : IDisposable
    {
        public long Read() => read();

        public void Dispose()
        {
            lock (owner._watermarks)
            {
                owner._watermarks.Remove(this);
            }
        }
    }
}
