using Indexing.Storage;

using Microsoft.Extensions.Options;

namespace Indexing.Indexer;

// Opening: the catalog's entries become open indexes. The rules that keep startup from ever
// costing an index: the catalog is required whenever index directories exist (IndexCatalog.Load);
// only generation directories of catalogued indexes that the catalog no longer names, and index
// directories of names it no longer holds (a delete interrupted after its catalog write), are deleted;
// an index that cannot be opened is kept, in Error with its reason, while the others serve; an index
// whose checkpoint is ahead of its store is rebuilt rather than followed.
internal sealed partial class IndexManager
{
    /// <summary>
    /// Opens the indexes under <paramref name="root"/> over <paramref name="store"/>: each active
    /// generation starts following the change feed, and every rebuild that was in progress when the
    /// process stopped resumes (a bulk phase after the key its replacement last committed; see docs/architecture.md, "Crash safety"). An index that cannot be
    /// opened is listed in state Error with its reason (<see cref="IndexUnavailableException"/> for
    /// its queries); the others serve.
    /// </summary>
    /// <param name="root">The directory of the catalog and every index generation.</param>
    /// <param name="store">The documents every index is built from and follows.</param>
    /// <param name="bulkSources">Starts the batch source of each rebuild's bulk phase (the server's: the adaptive prefetcher).</param>
    /// <param name="options">Settings; defaults when null.</param>
    /// <param name="observer">Told when a rebuild's bulk phase starts and ends (the server's admin page); none when null.</param>
    /// <exception cref="InvalidDataException">The catalog is unreadable, or missing while index directories exist.</exception>
    /// <exception cref="OptionsValidationException"><paramref name="options"/> break a rule of <see cref="IndexManagerOptionsValidator"/>.</exception>
    public static IndexManager Open(
        string root, DocumentStore store, BulkSourceFactory bulkSources, IndexManagerOptions? options = null, IRebuildObserver? observer = null)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(root);
        ArgumentNullException.ThrowIfNull(store);
        ArgumentNullException.ThrowIfNull(bulkSources);
        options = OptionProblems.ThrowIfInvalid(new IndexManagerOptionsValidator(), options ?? new IndexManagerOptions());
        var manager = new IndexManager(store, IndexCatalog.Load(Path.GetFullPath(root)), options, bulkSources, observer);
        try
        {
            manager._catalog.DeleteUnreferencedGenerations();
            manager._catalog.DeleteUnreferencedDirectories();
            lock (manager._lock)
            {
                foreach (var (name, entry) in manager._catalog.State.Indexes)
                {
                    manager.OpenEntry(name, entry);
                }
            }

            manager.RegisterTombstoneWatermark();
        }
        catch
        {
            manager.DisposeAsync().AsTask().GetAwaiter().GetResult();
            throw;
        }

        return manager;
    }

    // Caller holds _lock.
    private void OpenEntry(string name, CatalogEntry entry)
    {
        var directory = _catalog.GenerationDirectory(name, entry.ActiveGeneration);
        IndexDefinition definition;
        DocumentIndex index;
        try
        {
            definition = IndexDefinition.Parse(entry.DefinitionJson);
        }
        catch (IndexDefinitionException exception)
        {
            var reason = $"its definition in {MessageText.QuotePath(Path.Combine(Root, IndexCatalog.FileName))} is not valid: {exception.Message}";
            _indexes[name] = new ManagedIndex(name, definition: null, entry.ActiveGeneration, active: null, reason, entry.LastRebuild);
            return;
        }

        try
        {
            index = DocumentIndex.Open(directory, definition, _options.Index);
        }
        catch (IndexException exception)
        {
            var failed = new ManagedIndex(name, definition, entry.ActiveGeneration, active: null, exception.Message, entry.LastRebuild);
            _indexes[name] = failed;
            if (entry.Rebuild is { } replacing && replacing.Generation != entry.ActiveGeneration)
            {
                // A rebuild was under way: let it finish; its swap replaces the generation that failed.
                ResumeOrForget(failed, replacing);
            }

            return;
        }

        var managed = new ManagedIndex(name, definition, entry.ActiveGeneration, new ServingIndex(index, entry.ActiveGeneration), openFailure: null, entry.LastRebuild);
        _indexes[name] = managed;
        if (AheadOfStore(index) is { } ahead)
        {
            // Following from its checkpoint would skip every etag the store issues up to it, forever.
            // It serves what it holds (not following) until a rebuild from the store replaces it.
            StartRebuildLocked(managed, definition, ahead);
            return;
        }

        if (entry.Rebuild is { } intent)
        {
            var inPlace = intent.Generation == entry.ActiveGeneration;
            if (!inPlace && !index.IsStale && !index.BuildInterrupted)
            {
                index.StartFollowing(_store);
            }

            ResumeOrForget(managed, intent);
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

    // Resumes a persisted rebuild; if its replacement cannot even be opened, that rebuild is lost
    // (recorded as failed, its directory deleted), the serving generation is not. Caller holds _lock.
    private void ResumeOrForget(ManagedIndex managed, RebuildIntent intent)
    {
        var inPlace = intent.Generation == managed.Generation && managed.Active is not null;
        try
        {
            ResumeRebuildLocked(managed, intent, inPlace ? intent.Reason : "resumed after restart");
        }
        catch (IndexException exception)
        {
            var summary = new RebuildSummary(intent.Generation, RebuildPhase.Failed, intent.StartedAt, DateTimeOffset.UtcNow, $"could not be resumed: {exception.Message}");
            UpdateCatalog(managed.Name, current => current! with { Rebuild = null, LastRebuild = summary });
            managed.LastRebuild = summary;
            DeleteQuietly(_catalog.GenerationDirectory(managed.Name, intent.Generation));
        }
    }

    // An index whose checkpoint is past the store's last etag holds changes the store does not have:
    // the store was restored from an older backup, or lost its last writes (SyncWrites=false and a
    // power loss). Null when it is not ahead.
    private string? AheadOfStore(DocumentIndex index)
    {
        var committed = index.GetStatus().CommittedEtag;
        var last = _store.LastEtag;
        return committed > last
            ? $"ahead of the store: the index's checkpoint is etag {committed:N0}, the store's last etag {last:N0} (a store restored from an older backup, or writes lost); rebuilt from the store"
            : null;
    }
}
