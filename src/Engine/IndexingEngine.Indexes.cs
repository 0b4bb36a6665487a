using Indexing.Indexer;

namespace Indexing.Engine;

/// <summary>Indexes: define, list, delete, query, verify.</summary>
public sealed partial class IndexingEngine
{
    /// <summary>
    /// Creates the index, or changes its definition: a new index is built from every document of its
    /// collection; a changed one is rebuilt side by side while the old definition keeps serving, and the
    /// replacement switches in atomically once it caught up (follow it with <see cref="RebuildChanged"/> or
    /// <see cref="WaitForRebuildAsync"/>). The same definition again changes nothing. Past
    /// <see cref="IndexOptions.MaxConcurrentRebuilds"/> running rebuilds, the build or rebuild waits in phase Queued.
    /// </summary>
    /// <exception cref="IndexDefinitionException">The definition breaks a rule (the message names each).</exception>
    /// <exception cref="IndexException">A rebuild of the index is already running or queued, or it is being deleted (<see cref="IndexingErrorKind.RebuildConflict"/>).</exception>
    public IndexPutResult DefineIndex(IndexDefinition definition)
    {
        ThrowIfDisposed();
        return _indexes.CreateOrUpdate(definition);
    }

    /// <summary>Every index, by name: its serving generation, status, lag and running or last rebuild.</summary>
    public IReadOnlyList<IndexSummary> ListIndexes()
    {
        ThrowIfDisposed();
        var summaries = new List<IndexSummary>();
        foreach (var name in _indexes.Names)
        {
            try
            {
                summaries.Add(_indexes.GetSummary(name));
            }
            catch (IndexNotFoundException)
            {
                // Deleted between the list and the read: not an index any more.
            }
        }

        return summaries;
    }

    /// <summary>One index's summary.</summary>
    /// <exception cref="IndexException">No index has that name (<see cref="IndexingErrorKind.IndexNotFound"/>).</exception>
    public IndexSummary GetIndex(string name)
    {
        ThrowIfDisposed();
        return _indexes.GetSummary(name);
    }

    /// <summary>
    /// Deletes the index: stops following and any rebuild, removes it from the catalog (the commit point:
    /// a crash after it leaves no index, before it the whole index), then its directories once their
    /// running queries ended. Its tombstone watermark no longer holds the store's purge back.
    /// </summary>
    /// <exception cref="IndexException">No index has that name (<see cref="IndexingErrorKind.IndexNotFound"/>).</exception>
    public Task<IndexDeleteResult> DeleteIndexAsync(string name)
    {
        ThrowIfDisposed();
        return _indexes.DeleteAsync(name);
    }

    /// <summary>
    /// Runs <paramref name="query"/> on the index's serving generation; with <paramref name="includeDocuments"/>
    /// each hit carries its document's body as stored now.
    /// </summary>
    /// <exception cref="IndexException">No index has that name (<see cref="IndexingErrorKind.IndexNotFound"/>).</exception>
    /// <exception cref="IndexException">The query does not parse, expands too far, times out, or the index cannot be read.</exception>
    public QueryResult Query(string name, IndexQuery query, bool includeDocuments = false, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return _indexes.Query(name, query, includeDocuments, cancellationToken);
    }

    /// <summary>
    /// Compares the index's serving generation with the store: documents missing from the index, and
    /// entries the store no longer holds. Streams both sides; following goes on meanwhile.
    /// </summary>
    /// <exception cref="IndexException">A verify of this index is already running (<see cref="IndexingErrorKind.VerifyConflict"/>).</exception>
    public VerifyReport Verify(string name, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return _indexes.Verify(name, cancellationToken);
    }
}
