using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Engine;

/// <summary>Rebuilds (start, cancel, wait), their live prefetch limits and pressure, the engine's status, and the events a host's UI follows.</summary>
public sealed partial class IndexingEngine
{
    /// <summary>
    /// Each phase a rebuild starts in or moves to (see <see cref="RebuildEvent"/>), in order, raised on a
    /// thread of the engine's own: a handler may call the engine, and a slow one delays only later events.
    /// The first handler also gets what rebuilds did before it was added, those the open resumed included.
    /// </summary>
    public event EventHandler<RebuildEvent>? RebuildChanged
    {
        add => _events.Add(value);
        remove => _events.Remove(value);
    }

    /// <summary>
    /// Starts a side-by-side rebuild of the index with its current definition; the current generation serves until the swap.
    /// Past <see cref="IndexOptions.MaxConcurrentRebuilds"/> running rebuilds it starts in phase Queued and waits its turn.
    /// </summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    /// <exception cref="RebuildConflictException">A rebuild of the index is already running or queued, or it is being deleted.</exception>
    public RebuildProgress StartRebuild(string name)
    {
        ThrowIfDisposed();
        return _indexes.StartRebuild(name);
    }

    /// <summary>The running (or last finished, while the index is open) rebuild's progress, or null when none ran.</summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    public RebuildProgress? GetRebuild(string name)
    {
        ThrowIfDisposed();
        return _indexes.GetRebuild(name);
    }

    /// <summary>Cancels the running (or queued) rebuild and waits until it stopped; the old generation keeps serving. Past the catalog switch a rebuild can only finish, and this returns its end.</summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    public Task<RebuildProgress> CancelRebuildAsync(string name, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return _indexes.CancelRebuildAsync(name, cancellationToken);
    }

    /// <summary>Waits until the running rebuild ended (Done, Failed or Cancelled) and returns its last progress; null when none is running.</summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    public Task<RebuildProgress?> WaitForRebuildAsync(string name, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return _indexes.WaitForRebuildAsync(name, cancellationToken);
    }

    /// <summary>
    /// The live limits of the index's running bulk prefetch (budget, concurrency cap, rate cap), or null when
    /// its rebuild is not reading (no rebuild, queued, or past its bulk phase).
    /// </summary>
    public PrefetchLimits? GetRebuildLimits(string name)
    {
        ThrowIfDisposed();
        return RebuildPrefetch(name)?.Adaptive?.Limits;
    }

    /// <summary>
    /// Changes the live limits of the index's running bulk prefetch, at once: operators slow a rebuild
    /// down when live traffic suffers, or free it at night. Returns false when the rebuild is not reading.
    /// </summary>
    /// <exception cref="Microsoft.Extensions.Options.OptionsValidationException"><paramref name="limits"/> break a rule (each named).</exception>
    public bool UpdateRebuildLimits(string name, PrefetchLimits limits)
    {
        ArgumentNullException.ThrowIfNull(limits);
        ThrowIfDisposed();
        if (RebuildPrefetch(name)?.Adaptive is not { } adaptive)
        {
            return false;
        }

        adaptive.UpdateLimits(limits);
        return true;
    }

    /// <summary>
    /// The pressure of the index's running bulk prefetch: its read rate, concurrency, budget use, the
    /// controller's last decisions with their reasons; null when its rebuild is not reading.
    /// </summary>
    public PrefetchPressure? GetRebuildPressure(string name)
    {
        ThrowIfDisposed();
        return RebuildPrefetch(name)?.Source.Pressure;
    }

    /// <summary>The store's status (last etag, sizes, tombstones, write state, RocksDB's statistics); <see cref="ListIndexes"/> gives the indexes'.</summary>
    public StoreStatus GetStoreStatus()
    {
        ThrowIfDisposed();
        return _store.GetStatus();
    }

    private RegisteredPrefetch? RebuildPrefetch(string name)
    {
        IndexNames.Validate(name);
        return _prefetches.Find(PrefetchRegistry.RebuildPrefetchName(name));
    }
}
