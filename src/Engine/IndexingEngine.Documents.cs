using System.Diagnostics.CodeAnalysis;
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
    /// <exception cref="DocumentStoreException">The store's volume is full (<see cref="IndexingErrorKind.StoreFull"/>); reads and queries go on.</exception>
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

    /// <summary>The document's etag without reading its body, or null when there is none.</summary>
    public long? GetEtag(string id)
    {
        ThrowIfDisposed();
        return _store.GetMetadata(id)?.Etag;
    }

    /// <summary>
    /// The documents of <paramref name="ids"/> as stored now, in one consistent read, in the order asked (null for an
    /// absent id). Unlike <see cref="Get"/>, not timed as live traffic, which a rebuild's prefetcher backs off on: for
    /// reads that serve indexes, such as a query's hits.
    /// </summary>
    public IReadOnlyList<StoredDocument?> GetMany(IReadOnlyList<string> ids)
    {
        ThrowIfDisposed();
        return _store.GetMany(ids);
    }

    /// <summary>Whether <paramref name="id"/> is a valid document id; <paramref name="error"/> names the rule it breaks.</summary>
    public static bool IsValidDocumentId([NotNullWhen(true)] string? id, [NotNullWhen(false)] out DocumentValidationError? error) =>
        DocumentIds.TryValidate(id, out error);

    /// <summary>
    /// Whether <see cref="Put(string, ReadOnlySpan{byte})"/> would take the id and body (size within this engine's
    /// <see cref="StoreOptions.MaxDocumentBytes"/>, strict JSON object); <paramref name="error"/> names the first rule broken.
    /// </summary>
    public bool IsValidDocument([NotNullWhen(true)] string? id, ReadOnlySpan<byte> utf8Json, [NotNullWhen(false)] out DocumentValidationError? error)
    {
        ThrowIfDisposed();
        return DocumentIds.TryValidate(id, out error) && DocumentBodies.TryValidate(id, utf8Json, _store.Options.MaxDocumentBytes, out error);
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
