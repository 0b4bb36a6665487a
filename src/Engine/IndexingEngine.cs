using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Engine;

/// <summary>
/// The way in for a host: one data directory with its document store, its Lucene indexes and the
/// adaptive prefetcher that feeds their rebuilds, wired together. Open it, use it from any thread,
/// dispose it once.
/// <para>
/// Owns the store, the index manager and the registry of running prefetches, and closes them in the
/// one safe order: rebuilds and following stop before the store they read closes. It carries a
/// resumed rebuild's key to the prefetcher by itself (a rebuild interrupted by a crash continues after
/// the last document its commit holds), and reports what rebuilds do as <see cref="RebuildChanged"/>
/// events raised on a thread of their own, never under the engine's locks.
/// </para>
/// <para>
/// Errors: bad arguments throw the BCL's argument exceptions; everything the engine cannot do
/// (a full disk, an unknown index, a query that will not parse) throws an <see cref="IndexingException"/>.
/// </para>
/// <para>
/// Files: this one (open, close); <c>.Documents.cs</c>; <c>.Indexes.cs</c> (define, list, delete, query,
/// verify); <c>.Rebuilds.cs</c> (start, cancel, wait, live limits, pressure, events).
/// </para>
/// </summary>
public sealed partial class IndexingEngine : IAsyncDisposable
{
    private readonly DocumentStore _store;
    private readonly PrefetchRegistry _prefetches;
    private IndexManager _indexes = null!; // set by Open, right after the constructor
    private readonly EngineEvents _events;
    private int _disposed;

    private IndexingEngine(EngineOptions options, DocumentStore store)
    {
        Options = options;
        _store = store;
        _events = new EngineEvents(sender: this);
        _prefetches = new PrefetchRegistry(_events.PhaseEntered);

        // One budget and one memory of the device for every prefetch the engine starts (docs/decisions/0015).
        PrefetchOptions = new PrefetchOptions
        {
            BudgetBytes = options.Indexes.PrefetchBudgetBytes,
            SharedBudget = new SharedPrefetchBudget(options.Indexes.PrefetchBudgetBytes),
            Devices = new PrefetchDevices(),
        };
    }

    /// <summary>What the engine was opened with.</summary>
    public EngineOptions Options { get; }

    // For hosts in this repository that still reach the layers directly (the server's admin surface and
    // the lab), through their internals grant.
    internal DocumentStore Store => _store;

    internal IndexManager Indexes => _indexes;

    internal PrefetchRegistry Prefetches => _prefetches;

    /// <summary>
    /// What every prefetch the engine starts is started with: a rebuild's, and a host's own pass over
    /// the store (change it with <c>with</c>, keeping <see cref="PrefetchOptions.SharedBudget"/> and
    /// <see cref="PrefetchOptions.Devices"/>, which make them one budget and one controller per device).
    /// </summary>
    internal PrefetchOptions PrefetchOptions { get; }

    /// <summary>
    /// Opens (creating when missing) the data directory of <paramref name="options"/>: the store in
    /// <c>store/</c>, then every index of the catalog in <c>indexes/</c>, resuming the rebuilds a crash
    /// interrupted. Throws <see cref="Microsoft.Extensions.Options.OptionsValidationException"/> listing every
    /// broken rule of <see cref="EngineOptions.Validate"/> before anything is created, and a
    /// <see cref="DocumentStoreException"/> when the store cannot be opened.
    /// </summary>
    public static IndexingEngine Open(EngineOptions options) => Open(options, manager => manager);

    // The hooks the crash and fault tests set on the manager's options; hosts use Open(options).
    internal static IndexingEngine Open(EngineOptions options, Func<IndexManagerOptions, IndexManagerOptions> withHooks)
    {
        ArgumentNullException.ThrowIfNull(options);
        OptionProblems.ThrowIfInvalid(new EngineOptionsValidator(), options);
        options = options with { DataDirectory = Path.GetFullPath(options.DataDirectory) };
        var managerOptions = withHooks(new IndexManagerOptions
        {
            Index = options.Indexes,
        });

        var engine = new IndexingEngine(options, DocumentStore.Open(options.StoreDirectory, options.Storage));
        try
        {
            // Rebuilds read with the adaptive prefetcher, which backs off on the store's Get latency;
            // a resumed bulk phase reads after the key its last commit holds. The manager resumes
            // interrupted rebuilds as it opens: their phases wait in the engine's event queue.
            var prefetchOptions = engine.PrefetchOptions;
            engine._indexes = IndexManager.Open(
                options.IndexesDirectory,
                engine._store,
                (request, cancellationToken) =>
                    Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, prefetchOptions, startAfterId: request.StartAfterId, cancellationToken: cancellationToken),
                managerOptions,
                observer: engine._prefetches);
            return engine;
        }
        catch
        {
            engine._store.Dispose();
            engine._events.DisposeAsync().AsTask().GetAwaiter().GetResult();
            throw;
        }
    }

    /// <summary>
    /// Closes the engine: stops following and rebuilds (a rebuild resumes at the next open), waits up to
    /// <see cref="IndexOptions.DrainTimeout"/> for running queries, then closes the store. Every
    /// acknowledged write is in the store. Idempotent.
    /// </summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            // Indexes before the store: they follow its change feed until closed.
            await _indexes.DisposeAsync().ConfigureAwait(false);
        }
        finally
        {
            try
            {
                _store.Dispose();
            }
            finally
            {
                await _events.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
}
