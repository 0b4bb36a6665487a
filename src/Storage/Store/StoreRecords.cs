namespace Indexing.Storage;

/// <summary>One row of the metadata scan: a live document's id, its etag and its exact stored size.</summary>
public readonly record struct DocumentMetadata(string Id, long Etag, long SizeBytes);

/// <summary>A document body read under a snapshot (its etag comes from the metadata scan that planned the read).</summary>
public readonly record struct DocumentBody(string Id, byte[] Body);

/// <summary>A document as the store holds it now: id, etag and JSON body.</summary>
public readonly record struct StoredDocument(string Id, long Etag, byte[] Body);

/// <summary>One entry of the change feed: the latest write to a document (a put, or a delete when <see cref="Deleted"/>).</summary>
public readonly record struct ChangeEntry(long Etag, string Id, long SizeBytes, bool Deleted);

/// <summary>One document for <see cref="DocumentStore.PutMany"/>: its id and UTF-8 JSON body.</summary>
public readonly record struct DocumentWrite(string Id, ReadOnlyMemory<byte> Body);

/// <summary>What a bulk write stored: documents, body bytes, the etags it assigned, and how long it took.</summary>
public sealed record BulkWriteResult(long Documents, long Bytes, long FirstEtag, long LastEtag, TimeSpan Elapsed)
{
    /// <summary>Body megabytes (10^6 bytes) written per second.</summary>
    public double MegabytesPerSecond => Elapsed > TimeSpan.Zero ? Bytes / 1e6 / Elapsed.TotalSeconds : 0;
}

/// <summary>Thrown when RocksDB itself fails (I/O error, corruption, a closed store); wraps the engine's exception once.</summary>
public sealed class DocumentStoreException : Exception
{
    /// <summary>Creates the exception; <paramref name="message"/> names the operation and the document or range.</summary>
    public DocumentStoreException(string message, Exception? inner = null)
        : base(message, inner)
    {
    }
}
