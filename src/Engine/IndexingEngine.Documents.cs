using Indexing.Storage;

namespace Indexing.Engine;

/// <summary>Documents: JSON bodies by id; every write gets the store's next etag and is durable when the call returns (<see cref="StoreOptions.SyncWrites"/>).</summary>
public sealed partial class IndexingEngine
{
    /// <summary>
    /// Stores <paramref name="utf8Json"/> (one JSON value, UTF-8) as document <paramref name="id"/>, replacing any
    /// earlier body; every index over its collection follows. Returns the write's etag.
    /// </summary>
    /// <exception cref="DocumentValidationException">The id or the body breaks a rule (the message names it).</exception>
    /// <exception cref="StoreFullException">The store's volume is full; reads and queries go on.</exception>
    public long Put(string id, ReadOnlySpan<byte> utf8Json)
    {
        ThrowIfDisposed();
        return _store.Put(id, utf8Json);
    }

    /// <summary>Like <see cref="Put(string, ReadOnlySpan{byte})"/>, from a string.</summary>
    public long Put(string id, string json)
    {
        ThrowIfDisposed();
        return _store.Put(id, json);
    }

    /// <summary>The document's id, etag and UTF-8 body, or null when there is none.</summary>
    public StoredDocument? Get(string id)
    {
        ThrowIfDisposed();
        return _store.Get(id);
    }

    /// <summary>Deletes the document; returns the delete's etag, or null when there was no such document.</summary>
    public long? Delete(string id)
    {
        ThrowIfDisposed();
        return _store.Delete(id);
    }

    /// <summary>
    /// Stores many documents in large durable batches (the way to load a collection). Every document is
    /// validated before its batch is written; a refused one throws and the batches before it stay written.
    /// </summary>
    public BulkWriteResult PutMany(IEnumerable<DocumentWrite> documents, CancellationToken cancellationToken = default)
    {
        ThrowIfDisposed();
        return _store.PutMany(documents, cancellationToken);
    }
}
