using System.Diagnostics;
using RocksDbSharp;

namespace Indexing.Storage;

// Writes: validation first (nothing is written, no etag consumed, for a refused document), then
// one WriteBatch per document (or per bulk chunk) under the write lock. A delete adds a tombstone
// and a put over one removes it: either writes the tombstone count in the same batch.
internal sealed partial class DocumentStore
{
    /// <summary>
    /// <see cref="PutMany"/> writes in chunks of about this many body bytes (or <see cref="BulkChunkDocuments"/>
    /// documents), one WriteBatch each: large enough that the per-batch sync is amortised, small enough
    /// that a chunk's memory stays modest. Callers that gather documents for PutMany chunk the same way.
    /// </summary>
    public const long BulkChunkBytes = 8L << 20;

    /// <summary>Most documents in one <see cref="PutMany"/> chunk (see <see cref="BulkChunkBytes"/>).</summary>
    public const int BulkChunkDocuments = 4096;

    /// <summary>Stores <paramref name="utf8Json"/> as document <paramref name="id"/>, replacing any previous body; returns its new etag.</summary>
    /// <exception cref="DocumentValidationException">The id or body breaks a rule; nothing was written and no etag consumed.</exception>
    /// <exception cref="StoreFullException">The store's volume is full; nothing was written (see <see cref="GetWriteStatus"/>).</exception>
    /// <exception cref="DocumentStoreException">RocksDB refused the write for another reason; nothing was written.</exception>
    public long Put(string id, ReadOnlySpan<byte> utf8Json)
    {
        var key = DocumentIds.ToKey(id);
        DocumentBodies.Validate(id, utf8Json, Options.MaxDocumentBytes);
        _gate.Enter(this);
        try
        {
            lock (_writeLock)
            {
                var etag = _lastEtag + 1;
                var previous = ReadMeta(key);
                using var batch = new WriteBatch();
                AddPut(batch, key, utf8Json, etag, previous?.Etag);
                var held = _tombstones.Held;
                if (previous is { Deleted: true })
                {
                    _tombstones.AddState(batch, --held);
                }

                Write(batch, "put", id);
                Volatile.Write(ref _lastEtag, etag);
                _tombstones.SetHeld(held);
                return etag;
            }
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>Stores a JSON string body; see <see cref="Put(string, ReadOnlySpan{byte})"/>.</summary>
    public long Put(string id, string json)
    {
        DocumentIds.Validate(id);
        return Put(id, DocumentBodies.ToUtf8(id, json, Options.MaxDocumentBytes));
    }

    /// <summary>Deletes document <paramref name="id"/>; returns the deletion's etag, or null if there was no such document (nothing written).</summary>
    public long? Delete(string id)
    {
        var key = DocumentIds.ToKey(id);
        _gate.Enter(this);
        try
        {
            lock (_writeLock)
            {
                var previous = ReadMeta(key);
                if (previous is not { Deleted: false } live)
                {
                    return null;
                }

                var etag = _lastEtag + 1;
                using var batch = new WriteBatch();
                batch.Delete(key, _docs);
                batch.Put(key, StoredFormats.Meta(etag, 0, deleted: true), _meta);
                batch.Delete(StoredFormats.EtagKey(live.Etag), _changes);
                batch.Put(StoredFormats.EtagKey(etag), StoredFormats.Change(key, 0, deleted: true), _changes);
                var held = _tombstones.Held + 1;
                _tombstones.AddState(batch, held);
                Write(batch, "delete", id);
                Volatile.Write(ref _lastEtag, etag);
                _tombstones.SetHeld(held);
                return etag;
            }
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>
    /// Stores many documents in WriteBatches of about 8 MiB (a bulk load). Each document is
    /// validated before its batch is written: the first invalid one throws
    /// <see cref="DocumentValidationException"/>, and then the documents of earlier batches are
    /// stored while none of that batch is (validate first, e.g. with
    /// <see cref="DocumentBodies.TryValidate"/>, to report bad input per document instead).
    /// </summary>
    public BulkWriteResult PutMany(IEnumerable<DocumentWrite> documents, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(documents);
        var started = Stopwatch.GetTimestamp();
        long count = 0, bytes = 0, first = 0, last = 0;
        var chunk = new List<(byte[] Key, DocumentWrite Document)>(256);
        long chunkBytes = 0;
        foreach (var document in documents)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var key = DocumentIds.ToKey(document.Id);
            DocumentBodies.Validate(document.Id, document.Body.Span, Options.MaxDocumentBytes);
            chunk.Add((key, document));
            chunkBytes += document.Body.Length;
            if (chunkBytes >= BulkChunkBytes || chunk.Count >= BulkChunkDocuments)
            {
                WriteChunk(chunk, ref first, ref last);
                count += chunk.Count;
                bytes += chunkBytes;
                chunk.Clear();
                chunkBytes = 0;
            }
        }

        if (chunk.Count > 0)
        {
            WriteChunk(chunk, ref first, ref last);
            count += chunk.Count;
            bytes += chunkBytes;
        }

        return new BulkWriteResult(count, bytes, first, last, Stopwatch.GetElapsedTime(started));
    }

    private void WriteChunk(List<(byte[] Key, DocumentWrite Document)> chunk, ref long first, ref long last)
    {
        _gate.Enter(this);
        try
        {
            lock (_writeLock)
            {
                // The same id twice in one chunk: the second put must remove the first's change
                // entry, which is only in the batch so far, not in the database.
                var inChunk = new Dictionary<string, long>(StringComparer.Ordinal);
                var etag = _lastEtag;
                var held = _tombstones.Held;
                using var batch = new WriteBatch();
                foreach (var (key, document) in chunk)
                {
                    etag++;
                    long? previous;
                    if (inChunk.TryGetValue(document.Id, out var earlier))
                    {
                        previous = earlier;
                    }
                    else
                    {
                        var meta = ReadMeta(key);
                        previous = meta?.Etag;
                        if (meta is { Deleted: true })
                        {
                            held--;
                        }
                    }

                    AddPut(batch, key, document.Body.Span, etag, previous);
                    inChunk[document.Id] = etag;
                }

                if (held != _tombstones.Held)
                {
                    _tombstones.AddState(batch, held);
                }

                Write(batch, "bulk put", chunk[0].Document.Id, chunkDocuments: chunk.Count);
                if (first == 0)
                {
                    first = _lastEtag + 1;
                }

                last = etag;
                Volatile.Write(ref _lastEtag, etag);
                _tombstones.SetHeld(held);
            }
        }
        finally
        {
            _gate.Exit();
        }
    }

    private void AddPut(WriteBatch batch, byte[] key, ReadOnlySpan<byte> body, long etag, long? previousEtag)
    {
        batch.Put(key, body, _docs);
        batch.Put(key, StoredFormats.Meta(etag, body.Length, deleted: false), _meta);
        if (previousEtag is { } previous)
        {
            batch.Delete(StoredFormats.EtagKey(previous), _changes);
        }

        batch.Put(StoredFormats.EtagKey(etag), StoredFormats.Change(key, body.Length, deleted: false), _changes);
    }

    private (long Etag, long Size, bool Deleted)? ReadMeta(byte[] key)
    {
        var value = _db.Get(key, _meta, _pointRead);
        return value is null ? null : StoredFormats.ReadMeta(value);
    }

    // A refused write throws DocumentStoreException, or StoreFullException when the volume is full;
    // the wording is only built then. A bulk chunk names its first document.
    private void Write(WriteBatch batch, string operation, string id, int? chunkDocuments = null)
    {
        try
        {
            _db.Write(batch, _writeOptions);
        }
        catch (RocksDbException e)
        {
            throw chunkDocuments is not { } documents
                ? WriteFailed($"{operation} of document {MessageText.Quote(id)}", "nothing was written", e)
                : WriteFailed(
                    $"{operation} of {documents} document(s) from {MessageText.Quote(id)}",
                    "nothing of this chunk was written (the documents before it are stored)",
                    e);
        }

        _refusal.Succeeded();
    }
}
