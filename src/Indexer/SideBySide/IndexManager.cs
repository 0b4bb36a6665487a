using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// The indexes of one store: which generation of each serves, their definitions, side-by-side
/// rebuilds, queries and verification. The entry point the server uses.
/// </summary>
/// <remarks>
/// <para>
/// Layout under the root: <c>catalog.json</c> (<see cref="IndexCatalog"/>: the one source of truth
/// for which generation serves) and one directory per generation, <c>&lt;name&gt;/g000001/</c>.
/// Generation directories of catalogued indexes that the catalog does not name (left by a crash
/// between the catalog switch and the delete, or during a cancel), and index directories of names the
/// catalog no longer holds (left by a crash during a delete), are deleted on open; nothing else is.
/// </para>
/// <para>
/// Threading: any method from any thread. <c>_lock</c> serialises catalog changes and the map of
/// indexes; it is never held while indexing, reading the store or waiting, so neither writes to the
/// store nor queries ever wait for a rebuild. A query holds a lease on the generation it runs on
/// (<see cref="ServingIndex"/>); a retired generation is closed only once its last lease is released.
/// Background work (closing a retired generation when its last query ends, retrying to follow) is
/// tracked and awaited on dispose.
/// </para>
/// <para>
/// Files: this one (create/update, status, query, dispose); <c>.Open.cs</c> (catalog entries to open
/// indexes); <c>.Rebuild.cs</c> (a rebuild run and its end, abandon); <c>.Swap.cs</c> (the swap and
/// everything after its commit point); <c>.Verify.cs</c>; <c>.Tombstones.cs</c> (the low watermark
/// below which the store purges tombstones); <c>.Delete.cs</c> (deleting an index, catalog first).
/// Classes the manager holds, each with its own state: <see cref="IndexCatalog"/> (which generation
/// serves; startup cleanup of what it does not name), <see cref="RebuildPhases"/> (the bulk and
/// catch-up phases, bulk sources), <see cref="IndexVerifier"/> (verify slots, the comparison),
/// <see cref="PendingWork"/> (retired generations, background tasks), <see cref="TombstoneHold"/>
/// (the watermark registration, one index's hold), <see cref="RebuildSlots"/> (how many rebuilds run
/// at once, <see cref="IndexOptions.MaxConcurrentRebuilds"/>, and the queue of those waiting).
/// </para>
/// </remarks>
internal sealed partial class IndexManager : IAsyncDisposable
{
    private readonly DocumentStore _store;
    private readonly IndexCatalog _catalog;
    private readonly IndexManagerOptions _options;
    private readonly RebuildPhases _phases;
    private readonly IndexVerifier _verifier;

    // At most IndexOptions.MaxConcurrentRebuilds rebuilds run; the others wait in phase Queued (.Rebuild.cs).
    private readonly RebuildSlots _slots;

    // Told when each rebuild starts and moves (RebuildRun); the bulk phase's source goes through _phases.
    private readonly IRebuildObserver? _observer;
    private readonly Lock _lock = new();
    private readonly Dictionary<string, ManagedIndex> _indexes = new(StringComparer.Ordinal);
    private readonly PendingWork _pending = new();
    private readonly TombstoneHold _tombstoneHold;
    private readonly CancellationTokenSource _closing = new();
    private int _disposed;

    private IndexManager(DocumentStore store, IndexCatalog catalog, IndexManagerOptions options, BulkSourceFactory bulkSources, IRebuildObserver? observer)
    {
        _store = store;
        _catalog = catalog;
        // One pool of indexing slots for every build of every index the manager opens.
        _options = options with { Index = options.Index with { IndexingSlots = options.Index.IndexingSlots ?? new IndexingSlots(options.Index.IndexingThreads) } };
        _observer = observer;
        _phases = new RebuildPhases(store, options, new SharedPasses(bulkSources, options.Index.SharedPassWindow, _closing.Token), observer, Hook);
        _verifier = new IndexVerifier(store);
        _slots = new RebuildSlots(options.Index.MaxConcurrentRebuilds);
        _tombstoneHold = new TombstoneHold(store, catalog);
    }

    /// <summary>The directory holding the catalog and every index generation.</summary>
    public string Root => _catalog.Root;

    /// <summary>
    /// Defines an index. A new name creates it (built in place, serving partial results meanwhile);
    /// an existing one with the same definition is left alone; a changed definition starts a
    /// side-by-side rebuild, and the old definition serves until the swap.
    /// </summary>
    /// <exception cref="RebuildConflictException">The definition changed while a rebuild of the index is running, or the index is being deleted.</exception>
    public IndexPutResult CreateOrUpdate(IndexDefinition definition)
    {
        ArgumentNullException.ThrowIfNull(definition);
        ThrowIfDisposed();
        lock (_lock)
        {
            ThrowIfDeletingLocked(definition.Name);
            if (!_indexes.TryGetValue(definition.Name, out var managed))
            {
                var intent = new RebuildIntent(1, definition.ToJson(), DateTimeOffset.UtcNow, RebuildPhase.Bulk, "new index");
                UpdateCatalog(definition.Name, _ => new CatalogEntry(definition.ToJson(), 1, intent, null));
                OpenEntry(definition.Name, _catalog.State.Indexes[definition.Name]);
                return IndexPutResult.Created;
            }

            if (managed.Definition?.DefinitionHash == definition.DefinitionHash && managed.Rebuild is not { IsRunning: true })
            {
                return IndexPutResult.Unchanged;
            }

            if (managed.Rebuild is { IsRunning: true } running)
            {
                if (running.Definition.DefinitionHash == definition.DefinitionHash)
                {
                    return IndexPutResult.RebuildRunning;
                }

                throw RebuildConflictException.AlreadyRunning(definition.Name, running.Progress());
            }

            StartRebuildLocked(managed, definition, "definition changed");
            return IndexPutResult.RebuildStarted;
        }
    }

    /// <summary>The names of all indexes, in order.</summary>
    public IReadOnlyList<string> Names
    {
        get
        {
            lock (_lock)
            {
                return [.. _indexes.Keys.Order(StringComparer.Ordinal)];
            }
        }
    }

    /// <summary>
    /// Bytes every index writer buffers in RAM now: each serving generation's, and each running
    /// rebuild's replacement's (a side-by-side rebuild has two writers per index). For memory accounting.
    /// </summary>
    public long RamBufferBytes
    {
        get
        {
            // The writers are read outside the lock (Lucene takes its own); one closed meanwhile reads 0.
            var writers = new List<DocumentIndex>();
            lock (_lock)
            {
                foreach (var managed in _indexes.Values)
                {
                    if (managed.Active?.Index is { } serving)
                    {
                        writers.Add(serving);
                    }

                    if (managed.Rebuild is { } rebuild && !ReferenceEquals(rebuild.Target, managed.Active?.Index))
                    {
                        writers.Add(rebuild.Target);
                    }
                }
            }

            return writers.Sum(index => index.RamBufferBytes);
        }
    }

    /// <summary>
    /// The index's state as an operator reads it: serving generation, checkpoint, lag, rebuild. An
    /// index whose serving generation could not be opened reads as state Error with the reason.
    /// </summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    public IndexSummary GetSummary(string name)
    {
        var managed = Find(name);
        if (TryOnServing(managed, active => Summary(managed, active.Generation, active.Index.Definition, active.Index.GetStatus()), out var summary))
        {
            return summary;
        }

        var definition = managed.Definition;
        var directory = _catalog.GenerationDirectory(managed.Name, managed.Generation);
        return Summary(managed, managed.Generation, definition, DocumentIndex.FailedToOpenStatus(managed.Name, directory, definition, managed.OpenFailure!));
    }

    private IndexSummary Summary(ManagedIndex managed, int generation, IndexDefinition? definition, IndexStatus status) => new(
        managed.Name,
        definition?.Collection ?? string.Empty,
        generation,
        definition?.DefinitionHash ?? string.Empty,
        status,
        Math.Max(0, _store.LastEtag - status.AppliedEtag),
        managed.Rebuild?.Progress(),
        managed.LastRebuild);

    /// <summary>
    /// Runs <paramref name="query"/> on the generation serving now; that generation is not closed
    /// before the query ends. With <paramref name="includeDocuments"/> the hits' current documents
    /// are read from the store too (<see cref="QueryResult.Documents"/>).
    /// </summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    /// <exception cref="IndexUnavailableException">The index's serving generation could not be opened.</exception>
    /// <remarks>The query's own failures are <see cref="DocumentIndex.Query(IndexQuery, CancellationToken)"/>'s; its <see cref="IndexQuery.TimeLimit"/> also bounds how long it holds the generation.</remarks>
    public QueryResult Query(string name, IndexQuery query, bool includeDocuments = false, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(query);
        return OnServing(Find(name), serving =>
        {
            _options.QueryHook?.Invoke(name, serving.Generation);
            return includeDocuments ? serving.Index.Query(query, _store, cancellationToken) : serving.Index.Query(query, cancellationToken);
        });
    }

    // Runs work on the generation serving now, holding a lease so that nothing closes it meanwhile.
    private T OnServing<T>(ManagedIndex managed, Func<ServingIndex, T> work) =>
        TryOnServing(managed, work, out var result)
            ? result
            : throw new IndexUnavailableException(managed.Name, managed.Generation, managed.OpenFailure!);

    // False when the index has no open serving generation (it failed to open).
    private bool TryOnServing<T>(ManagedIndex managed, Func<ServingIndex, T> work, out T result)
    {
        while (true)
        {
            if (managed.Active is not { } serving)
            {
                result = default!;
                return false;
            }

            if (!serving.TryAcquire())
            {
                // Retired a moment ago by a swap (the next read sees the new generation), by a delete
                // or by shutdown.
                ThrowIfDisposed();
                if (managed.Deleted)
                {
                    throw new IndexNotFoundException(managed.Name);
                }

                Thread.Yield();
                continue;
            }

            try
            {
                result = work(serving);
                return true;
            }
            finally
            {
                serving.Release();
            }
        }
    }

    /// <summary>
    /// Stops rebuilds (their intent stays in the catalog, so they resume on the next open) and closes
    /// every index, each once its running queries ended (waiting up to <see cref="IndexManagerOptions.DrainTimeout"/>). Idempotent.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        // First: from here on the indexes close, and the store must not wait on them to purge.
        UnregisterTombstoneWatermark();
        // Synchronously: every rebuild's linked token is cancelled before this method first yields,
        // so a rebuild released from a wait right after the close began still sees the shutdown
        // (CancelAsync cancels linked sources later, from the thread pool).
        _closing.Cancel();
        ManagedIndex[] all;
        lock (_lock)
        {
            all = [.. _indexes.Values];
        }

        foreach (var managed in all)
        {
            if (managed.Rebuild is { } rebuild)
            {
                await rebuild.StopForShutdownAsync().ConfigureAwait(false);
            }
        }

        // Retries stop at once (they watch _closing); generations waiting for their last query are
        // given the drain timeout, then closed anyway: the process is stopping.
        var serving = all.Select(static managed => managed.Active).OfType<ServingIndex>().ToArray();
        var drained = serving.Select(static generation => generation.RetireAsync()).Concat(_pending.Tasks());
        await Task.WhenAll(drained).WaitAsync(_options.DrainTimeout).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        foreach (var generation in serving.Concat(_pending.RetiredNow()))
        {
            CloseGeneration(generation);
        }

        _closing.Dispose();
    }

    internal ManagedIndex Find(string name)
    {
        ThrowIfDisposed();
        IndexNames.Validate(name);
        lock (_lock)
        {
            return _indexes.TryGetValue(name, out var managed) ? managed : throw new IndexNotFoundException(name);
        }
    }

    // Background work of the manager: awaited (and its failures ignored: each records its own) on dispose.
    private void Track(Task task) => _pending.Track(task);

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);

    private void Hook(string name, RebuildPoint point) => _options.RebuildHook?.Invoke(name, point);

    private void Hook(string name, DeletePoint point) => _options.DeleteHook?.Invoke(name, point);

    private void UpdateCatalog(string name, Func<CatalogEntry?, CatalogEntry?> change, RebuildPoint? point = null) =>
        UpdateCatalog(name, change, atRename: point is { } reached ? () => Hook(name, reached) : null);

    // Every catalog change goes through here (under _lock): the test hooks run between the new
    // catalog's temp file and its rename, where a real write fails on a full disk.
    private void UpdateCatalog(string name, Func<CatalogEntry?, CatalogEntry?> change, Action? atRename)
    {
        _catalog.Update(name, change, (step, path) =>
        {
            if (step == AtomicFileStep.Rename)
            {
                _options.CatalogHook?.Invoke(name);
                atRename?.Invoke();
            }

            _options.CatalogFileHook?.Invoke(step, path);
        });
    }
}
