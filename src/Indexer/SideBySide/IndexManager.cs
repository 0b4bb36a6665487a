using System.Text;

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
/// Directories the catalog does not name (left by a crash between the catalog switch and the
/// delete, or during a cancel) are deleted on open.
/// </para>
/// <para>
/// Threading: any method from any thread. <c>_lock</c> serialises catalog changes and the map of
/// indexes; it is never held while indexing, reading the store or waiting, so neither writes to the
/// store nor queries ever wait for a rebuild. A query holds a lease on the generation it runs on
/// (<see cref="ServingIndex"/>); the swap retires the old generation and closes it once drained.
/// </para>
/// <para>
/// Files: this one (open, create/update, status, query, dispose); <c>.Rebuild.cs</c> (the rebuild's
/// phases); <c>.Verify.cs</c> (index vs store comparison).
/// </para>
/// </remarks>
public sealed partial class IndexManager : IAsyncDisposable
{
    private readonly DocumentStore _store;
    private readonly IndexCatalog _catalog;
    private readonly IndexManagerOptions _options;
    private readonly Lock _lock = new();
    private readonly Dictionary<string, ManagedIndex> _indexes = new(StringComparer.Ordinal);
    private readonly CancellationTokenSource _closing = new();
    private int _disposed;

    private IndexManager(DocumentStore store, IndexCatalog catalog, IndexManagerOptions options)
    {
        _store = store;
        _catalog = catalog;
        _options = options;
    }

    /// <summary>The directory holding the catalog and every index generation.</summary>
    public string Root => _catalog.Root;

    /// <summary>
    /// Opens the indexes under <paramref name="root"/> over <paramref name="store"/>: each active
    /// generation starts following the change feed, and every rebuild that was in progress when the
    /// process stopped resumes (its bulk phase starts over; see the README).
    /// </summary>
    public static IndexManager Open(string root, DocumentStore store, IndexManagerOptions? options = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(root);
        ArgumentNullException.ThrowIfNull(store);
        options = (options ?? new IndexManagerOptions()).Validate();
        var manager = new IndexManager(store, IndexCatalog.Load(Path.GetFullPath(root)), options);
        try
        {
            manager.DeleteUnreferencedDirectories();
            foreach (var (name, entry) in manager._catalog.State.Indexes)
            {
                manager.OpenEntry(name, entry);
            }
        }
        catch
        {
            manager.DisposeAsync().AsTask().GetAwaiter().GetResult();
            throw;
        }

        return manager;
    }

    /// <summary>
    /// Defines an index. A new name creates it (built in place, serving partial results meanwhile);
    /// an existing one with the same definition is left alone; a changed definition starts a
    /// side-by-side rebuild, and the old definition serves until the swap.
    /// </summary>
    /// <exception cref="RebuildConflictException">The definition changed while a rebuild of the index is running.</exception>
    public IndexPutResult CreateOrUpdate(IndexDefinition definition)
    {
        ArgumentNullException.ThrowIfNull(definition);
        ThrowIfDisposed();
        lock (_lock)
        {
            if (!_indexes.TryGetValue(definition.Name, out var managed))
            {
                var intent = new RebuildIntent(1, definition.ToJson(), DateTimeOffset.UtcNow, RebuildPhase.Bulk, "new index");
                _catalog.Update(definition.Name, _ => new CatalogEntry(definition.ToJson(), 1, intent, null));
                OpenEntry(definition.Name, _catalog.State.Indexes[definition.Name]);
                return IndexPutResult.Created;
            }

            if (managed.Definition.DefinitionHash == definition.DefinitionHash && managed.Rebuild is not { IsRunning: true })
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

    /// <summary>The index's state as an operator reads it: serving generation, checkpoint, lag, rebuild.</summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    public IndexSummary GetSummary(string name)
    {
        var managed = Find(name);
        return OnServing(managed, active =>
        {
            var status = active.Index.GetStatus();
            return new IndexSummary(
                managed.Name,
                active.Index.Definition.Collection,
                active.Generation,
                active.Index.Definition.DefinitionHash,
                status,
                Math.Max(0, _store.LastEtag - status.AppliedEtag),
                managed.Rebuild?.Progress(),
                managed.LastRebuild);
        });
    }

    /// <summary>
    /// Runs <paramref name="query"/> on the generation serving now; a swap waits for it to end before
    /// closing that generation. With <paramref name="includeDocuments"/> the hits' current documents
    /// are read from the store too (<see cref="QueryResult.Documents"/>).
    /// </summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    /// <remarks>The query's own failures are <see cref="DocumentIndex.Query(IndexQuery, CancellationToken)"/>'s; its <see cref="IndexQuery.TimeLimit"/> also bounds how long it holds the generation.</remarks>
    public QueryResult Query(string name, IndexQuery query, bool includeDocuments = false, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(query);
        return OnServing(Find(name), serving => includeDocuments ? serving.Index.Query(query, _store, cancellationToken) : serving.Index.Query(query, cancellationToken));
    }

    // Runs work on the generation serving now, holding a lease so a swap cannot close it meanwhile.
    private static T OnServing<T>(ManagedIndex managed, Func<ServingIndex, T> work)
    {
        while (true)
        {
            var serving = managed.Active;
            if (!serving.TryAcquire())
            {
                continue; // retired by a swap a moment ago: the next read sees the new generation
            }

            try
            {
                return work(serving);
            }
            finally
            {
                serving.Release();
            }
        }
    }

    /// <summary>Stops rebuilds (their intent stays in the catalog, so they resume on the next open) and closes every index. Idempotent.</summary>
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _closing.CancelAsync().ConfigureAwait(false);
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

            managed.Active.Index.Dispose();
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

    private void OpenEntry(string name, CatalogEntry entry)
    {
        var definition = IndexDefinition.Parse(entry.DefinitionJson);
        var directory = _catalog.GenerationDirectory(name, entry.ActiveGeneration);
        var index = DocumentIndex.Open(directory, definition, _options.Index);
        var managed = new ManagedIndex(name, definition, new ServingIndex(index, entry.ActiveGeneration), entry.LastRebuild);
        _indexes[name] = managed;
        if (entry.Rebuild is { } intent)
        {
            var inPlace = intent.Generation == entry.ActiveGeneration;
            if (!inPlace && !index.IsStale && !index.BuildInterrupted)
            {
                index.StartFollowing(_store);
            }

            ResumeRebuildLocked(managed, intent, inPlace ? intent.Reason : "resumed after restart");
            return;
        }

        if (index.IsStale || index.BuildInterrupted)
        {
            // Opened with a definition whose hash differs from the commit's (e.g. the canonical form
            // changed in an upgrade): it serves what it has while a rebuild makes it right.
            StartRebuildLocked(managed, definition, index.IsStale ? "stale: definition hash changed" : "build interrupted");
            return;
        }

        index.StartFollowing(_store);
    }

    private void DeleteUnreferencedDirectories()
    {
        foreach (var indexDirectory in Directory.EnumerateDirectories(_catalog.Root))
        {
            var name = Path.GetFileName(indexDirectory);
            if (!_catalog.State.Indexes.TryGetValue(name, out var entry))
            {
                Directory.Delete(indexDirectory, recursive: true);
                continue;
            }

            foreach (var generationDirectory in Directory.EnumerateDirectories(indexDirectory))
            {
                var generation = Path.GetFileName(generationDirectory);
                var keep = generation == Path.GetFileName(_catalog.GenerationDirectory(name, entry.ActiveGeneration))
                    || (entry.Rebuild is { } intent && generation == Path.GetFileName(_catalog.GenerationDirectory(name, intent.Generation)));
                if (!keep)
                {
                    Directory.Delete(generationDirectory, recursive: true);
                }
            }
        }
    }

    private void ThrowIfDisposed() => ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);

    private void Hook(string name, RebuildPoint point) => _options.RebuildHook?.Invoke(name, point);
}

/// <summary>What <see cref="IndexManager.CreateOrUpdate"/> did.</summary>
public enum IndexPutResult
{
    /// <summary>A new index; it is being built and serves partial results meanwhile.</summary>
    Created,

    /// <summary>The same definition was already in use; nothing changed.</summary>
    Unchanged,

    /// <summary>The definition changed: a side-by-side rebuild started; the old definition serves until the swap.</summary>
    RebuildStarted,

    /// <summary>A rebuild to this very definition is already running.</summary>
    RebuildRunning,
}

/// <summary>An index as an operator reads it.</summary>
/// <param name="Name">Its name.</param>
/// <param name="Collection">The collection it indexes.</param>
/// <param name="Generation">The generation serving queries.</param>
/// <param name="DefinitionHash">Hash of the serving definition.</param>
/// <param name="Status">The serving generation's state, checkpoint, failures and metrics.</param>
/// <param name="LagEtags">The store's last etag minus what the serving generation has applied.</param>
/// <param name="Rebuild">The rebuild in progress or just finished, if any.</param>
/// <param name="LastRebuild">How the last rebuild ended, as persisted.</param>
public sealed record IndexSummary(
    string Name,
    string Collection,
    int Generation,
    string DefinitionHash,
    IndexStatus Status,
    long LagEtags,
    RebuildProgress? Rebuild,
    RebuildSummary? LastRebuild);

/// <summary>How a finished rebuild ended (persisted in the catalog).</summary>
public sealed record RebuildSummary(int Generation, RebuildPhase Phase, DateTimeOffset StartedAt, DateTimeOffset EndedAt, string? Error);

// Index names as lookups see them (URLs, commands): the definition's name rule, so '..', '/',
// empty and the like are refused before they can reach a path.
internal static class IndexNames
{
    public static void Validate(string? name)
    {
        if (!IndexDefinition.IsValidName(name, out var problem))
        {
            throw new ArgumentException(problem, nameof(name));
        }
    }
}

/// <summary>No index has the given name.</summary>
public sealed class IndexNotFoundException : Exception
{
    internal IndexNotFoundException(string name)
        : base($"there is no index named {MessageText.Quote(name)}; define it first (PUT /indexes/{{name}}), or list the indexes to see their names.")
    {
        IndexName = name;
    }

    /// <summary>The name asked for.</summary>
    public string IndexName { get; }
}

/// <summary>A rebuild of the index is already running; only one replacement per index at a time.</summary>
public sealed class RebuildConflictException : InvalidOperationException
{
    private RebuildConflictException(string name, string message)
        : base(message)
    {
        IndexName = name;
    }

    /// <summary>The index.</summary>
    public string IndexName { get; }

    internal static RebuildConflictException AlreadyRunning(string name, RebuildProgress running) =>
        new(name, new StringBuilder()
            .Append($"a rebuild of index {MessageText.Quote(name)} is already running (generation {running.Generation}, phase {running.Phase}, ")
            .Append($"started {running.StartedAt:u}); only one replacement per index runs at a time. Wait for it, or cancel it first.")
            .ToString());
}
