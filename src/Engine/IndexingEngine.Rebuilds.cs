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
    /// <exception cref="IndexException">No index has that name (<see cref="IndexingErrorKind.IndexNotFound"/>).</exception>
    /// <exception cref="IndexException">A rebuild of the index is already running or queued, or it is being deleted (<see cref="IndexingErrorKind.RebuildConflict"/>).</exception>
    public RebuildProgress StartRebuild(string name)
    {
        ThrowIfDisposed();
        return _indexes.StartRebuild(name);
    }

    /// <summary>The running (or last finished, while the index is open) rebuild's progress, or null when none ran.</summary>
    /// <exception cref="IndexException">No index has that name (<see cref="IndexingErrorKind.IndexNotFound"/>).</exception>
    public RebuildProgress? GetRebuild(string name)
    {
        ThrowIfDisposed();
        return _indexes.GetRebuild(name);
    }

    /// <summary>Cancels the running (or queued) rebuild and waits until it stopped; the old generation keeps serving. Past the catalog switch a rebuild can only finish, and this returns its end.</summary>
    /// <exception cref="IndexException">No index has that name (<see cref="IndexingErrorKind.IndexNotFound"/>).</exception>
    public Task<RebuildProgress> CancelRebuildAsync(string name, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return _indexes.CancelRebuildAsync(name, cancellationToken);
    }

    /// <summary>Waits until the running rebuild ended (Done, Failed or Cancelled) and returns its last progress; null when none is running.</summary>
    /// <exception cref="IndexException">No index has that name (<see cref="IndexingErrorKind.IndexNotFound"/>).</exception>
    public Task<RebuildProgress?> WaitForRebuildAsync(string name, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return _indexes.WaitForRebuildAsync(name, cancellationToken);
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
    /// controller's last decisions with their reasons, and its live limits; null when its rebuild is not
    /// reading (no rebuild, or past its bulk phase).
    /// </summary>
    public PrefetchPressure? GetRebuildPressure(string name)
    {
        ThrowIfDisposed();
        return RebuildPrefetch(name) is { } found ? Describe(found) : null;
    }

    /// <summary>The store's status (last etag, sizes, tombstones, write state, RocksDB's statistics); <see cref="ListIndexes"/> gives the indexes'.</summary>
    public StoreStatus GetStoreStatus()
    {
        ThrowIfDisposed();
        return _store.GetStatus();
    }

    /// <summary>
    /// Every prefetch running in the engine, in the order they started: each rebuild's bulk prefetch as
    /// <c>rebuild &lt;index&gt;</c>, and any other this process started over the engine's store. For a host's
    /// admin view and metrics; a rebuild's alone is <see cref="GetRebuildPressure"/>.
    /// </summary>
    public IReadOnlyList<PrefetchPressure> ListPrefetches()
    {
        ThrowIfDisposed();
        return [.. _prefetches.Running.Select(Describe)];
    }

    /// <summary>
    /// The last few prefetches that ended (<see cref="ListPrefetches"/> no longer lists them), newest first,
    /// each as its final pressure: history and recent decisions as they were at the end,
    /// <see cref="PrefetchPressure.State"/> how it ended (Completed, Cancelled, or Failed with
    /// <see cref="PrefetchPressure.Failure"/>; one stopped before its end, as a cancelled or failed rebuild
    /// stops its prefetch, is Cancelled) and <see cref="PrefetchPressure.Timestamp"/> when. For a host's
    /// admin view after a rebuild; the engine keeps only these records, a handful, not the documents.
    /// </summary>
    public IReadOnlyList<PrefetchPressure> ListFinishedPrefetches()
    {
        ThrowIfDisposed();
        return [.. _prefetches.Finished];
    }

    /// <summary>The running prefetch named <paramref name="name"/> (as <see cref="ListPrefetches"/> names it), or null.</summary>
    public PrefetchPressure? GetPrefetch(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        ThrowIfDisposed();
        return _prefetches.Find(name) is { } found ? Describe(found) : null;
    }

    /// <summary>
    /// Changes the live limits of the running prefetch named <paramref name="name"/>, at once, and returns it
    /// as it is afterwards; null when no prefetch of that name is running or it ended meanwhile. Only adaptive
    /// prefetches have live limits (<see cref="PrefetchPressure.Limits"/> is not null).
    /// </summary>
    /// <exception cref="InvalidOperationException">The prefetch reads with a fixed strategy, which has no live limits.</exception>
    /// <exception cref="Microsoft.Extensions.Options.OptionsValidationException"><paramref name="limits"/> break a rule (each named).</exception>
    public PrefetchPressure? UpdatePrefetchLimits(string name, PrefetchLimits limits)
    {
        ArgumentNullException.ThrowIfNull(name);
        ArgumentNullException.ThrowIfNull(limits);
        ThrowIfDisposed();
        if (_prefetches.Find(name) is not { } found)
        {
            return null;
        }

        if (found.Adaptive is not { } adaptive)
        {
            throw new InvalidOperationException(
                $"prefetch {MessageText.Quote(name)} uses the {found.Source.Pressure.Strategy} strategy, whose reads are fixed; limits apply live only to adaptive prefetches.");
        }

        try
        {
            adaptive.UpdateLimits(limits);
        }
        catch (ObjectDisposedException)
        {
            // It finished between the lookup and now: nothing left to limit.
            return null;
        }

        return Describe(found);
    }

    private static PrefetchPressure Describe(RegisteredPrefetch prefetch) => prefetch.Source.Describe(prefetch.Name);

    private RegisteredPrefetch? RebuildPrefetch(string name)
    {
        IndexNames.Validate(name);
        return _prefetches.Find(PrefetchRegistry.RebuildPrefetchName(name));
    }
}
