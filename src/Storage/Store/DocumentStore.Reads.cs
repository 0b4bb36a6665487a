using System.Diagnostics;
using RocksDbSharp;

namespace Indexing.Storage;

// Latest-state reads: the foreground Get (latency recorded for the prefetcher's governor),
// GetMany for query results and incremental indexing, the metadata scan and the change feed.
internal sealed partial class DocumentStore
{
    /// <summary>The document as stored now, or null. A foreground read: its latency is recorded in <see cref="ForegroundReadLatency"/>.</summary>
    public StoredDocument? Get(string id)
    {
        var key = DocumentIds.ToKey(id);
        _gate.Enter(this);
        var started = Stopwatch.GetTimestamp();
        PointReadCacheCounter.Begin();
        try
        {
            // One MultiGet over meta and docs reads both at the same sequence number, so the etag
            // and the body always belong to the same write.
            var pair = MultiGet([key, key], [_meta, _docs], documents: 1, id);
            return ToDocument(id, pair[0].Value, pair[1].Value);
        }
        finally
        {
            _statistics.ForegroundCache.End();
            ForegroundReadLatency.RecordTicks(Stopwatch.GetTimestamp() - started);
            _gate.Exit();
        }
    }

    /// <summary>The document's etag and size now, or null if it does not exist.</summary>
    public DocumentMetadata? GetMetadata(string id)
    {
        var key = DocumentIds.ToKey(id);
        _gate.Enter(this);
        try
        {
            var meta = ReadMeta(key);
            return meta is { Deleted: false } m ? new DocumentMetadata(id, m.Etag, m.Size) : null;
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>
    /// Many documents in one consistent MultiGet (ids sorted into key order first, as RocksDB reads
    /// sorted keys fastest); the result is in the caller's order, null for an absent id. Not a
    /// foreground read: indexing and query result loading use it.
    /// </summary>
    public IReadOnlyList<StoredDocument?> GetMany(IReadOnlyList<string> ids)
    {
        ArgumentNullException.ThrowIfNull(ids);
        if (ids.Count == 0)
        {
            return [];
        }

        var order = new int[ids.Count];
        for (var i = 0; i < order.Length; i++)
        {
            order[i] = i;
        }

        Array.Sort(order, (a, b) => DocumentIds.CompareKeyOrder(ids[a], ids[b]));
        var keys = new byte[ids.Count * 2][];
        var families = new ColumnFamilyHandle[keys.Length];
        for (var i = 0; i < order.Length; i++)
        {
            var key = DocumentIds.ToKey(ids[order[i]]);
            keys[2 * i] = key;
            keys[(2 * i) + 1] = key;
            families[2 * i] = _meta;
            families[(2 * i) + 1] = _docs;
        }

        _gate.Enter(this);
        try
        {
            var values = MultiGet(keys, families, ids.Count, ids[order[0]]);
            var result = new StoredDocument?[ids.Count];
            for (var i = 0; i < order.Length; i++)
            {
                result[order[i]] = ToDocument(ids[order[i]], values[2 * i].Value, values[(2 * i) + 1].Value);
            }

            return result;
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>Live documents' metadata in key order, optionally of one collection. Lazily enumerated; dispose the enumerator (foreach does).</summary>
    public IEnumerable<DocumentMetadata> ScanMetadata(string? collection = null) =>
        ScanMeta(_scanRead, collection, startAfterId: null, owner: null, CancellationToken.None);

    /// <summary>
    /// The change feed: for each document changed after <paramref name="afterEtag"/>, its latest
    /// change (put or delete), in etag order, at most <paramref name="maxEntries"/>. A document
    /// changed twice appears once, at its latest etag.
    /// </summary>
    public IEnumerable<ChangeEntry> ReadChanges(long afterEtag, int maxEntries = int.MaxValue)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(afterEtag);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxEntries);
        _gate.Enter(this);
        OpenIterator iterator;
        try
        {
            iterator = OpenIterator(_changes, _pointRead, owner: null);
            iterator.Native.Seek(StoredFormats.EtagKey(afterEtag + 1));
        }
        finally
        {
            _gate.Exit();
        }

        return ReadChangesFrom(iterator, maxEntries);
    }

    internal IEnumerable<DocumentMetadata> ScanMeta(
        ReadOptions readOptions, string? collection, string? startAfterId, StoreSnapshot? owner, CancellationToken cancellationToken)
    {
        var prefix = StoredFormats.CollectionPrefix(collection);
        byte[]? after = startAfterId is null ? null : DocumentIds.ToKey(startAfterId);
        _gate.Enter(this);
        OpenIterator iterator;
        try
        {
            iterator = OpenIterator(_meta, readOptions, owner);
            var start = after is not null && (prefix is null || after.AsSpan().SequenceCompareTo(prefix) >= 0) ? after : prefix;
            if (start is null)
            {
                iterator.Native.SeekToFirst();
            }
            else
            {
                iterator.Native.Seek(start);
            }
        }
        finally
        {
            _gate.Exit();
        }

        return ScanMetaFrom(iterator, prefix, after, cancellationToken);
    }

    private IEnumerable<DocumentMetadata> ScanMetaFrom(OpenIterator iterator, byte[]? prefix, byte[]? after, CancellationToken cancellationToken)
    {
        try
        {
            var first = true;
            while (true)
            {
                cancellationToken.ThrowIfCancellationRequested();
                DocumentMetadata row;
                bool live;
                if (!iterator.Enter())
                {
                    throw new ObjectDisposedException(nameof(DocumentStore), "the store or snapshot was disposed while a metadata scan was running.");
                }

                try
                {
                    if (!first)
                    {
                        iterator.Native.Next();
                    }

                    first = false;
                    if (!iterator.Native.Valid())
                    {
                        ThrowIfIteratorFailed(iterator.Native, "the metadata scan");
                        yield break;
                    }

                    var key = iterator.Native.GetKeySpan();
                    if (prefix is not null && !key.StartsWith(prefix))
                    {
                        yield break;
                    }

                    if (after is not null && key.SequenceEqual(after))
                    {
                        continue;
                    }

                    var (etag, size, deleted) = StoredFormats.ReadMeta(iterator.Native.GetValueSpan());
                    live = !deleted;
                    row = live ? new DocumentMetadata(DocumentIds.FromKey(key), etag, size) : default;
                }
                finally
                {
                    iterator.Exit();
                }

                if (live)
                {
                    yield return row;
                }
            }
        }
        finally
        {
            iterator.Dispose();
        }
    }

    internal IEnumerable<ChangeEntry> ReadChangesFrom(OpenIterator iterator, int maxEntries)
    {
        try
        {
            for (var returned = 0; returned < maxEntries; returned++)
            {
                ChangeEntry entry;
                if (!iterator.Enter())
                {
                    throw new ObjectDisposedException(nameof(DocumentStore), "the store was disposed while the change feed was being read.");
                }

                try
                {
                    if (returned > 0)
                    {
                        iterator.Native.Next();
                    }

                    if (!iterator.Native.Valid())
                    {
                        ThrowIfIteratorFailed(iterator.Native, "reading the change feed");
                        yield break;
                    }

                    entry = StoredFormats.ReadChange(StoredFormats.ReadEtagKey(iterator.Native.GetKeySpan()), iterator.Native.GetValueSpan());
                }
                finally
                {
                    iterator.Exit();
                }

                yield return entry;
            }
        }
        finally
        {
            iterator.Dispose();
        }
    }

    // Keys may name a document more than once (meta and docs), so the message takes the document count.
    internal KeyValuePair<byte[], byte[]>[] MultiGet(byte[][] keys, ColumnFamilyHandle[] families, int documents, string firstId, ReadOptions? readOptions = null)
    {
        try
        {
            return _db.MultiGet(keys, families, readOptions ?? _pointRead);
        }
        catch (RocksDbException e)
        {
            throw ReadFailed($"reading {documents} document(s) from {MessageText.Quote(firstId)}", e.Message, e);
        }
    }

    // RocksDB turns an iterator invalid both at the end of the data and when a read fails (a corrupt
    // block, an I/O error): a loop that stops on !Valid() must ask which, or a failed read looks like
    // the end of the data (a metadata scan that ends early would rebuild an index without the rest).
    internal void ThrowIfIteratorFailed(Iterator iterator, string reading)
    {
        try
        {
            // RocksDbSharp's overload without an error pointer throws the error, and frees it.
            Native.Instance.rocksdb_iter_get_error(iterator.Handle);
        }
        catch (RocksDbException e)
        {
            throw ReadFailed(reading, e.Message, e);
        }
    }

    // The one wording of a failed read: what was read, the store, RocksDB's message.
    internal DocumentStoreException ReadFailed(string reading, string? rocksDbMessage, Exception? inner = null) =>
        new($"{reading} failed in RocksDB at {MessageText.Quote(Path)}: {rocksDbMessage}", inner);

    private static StoredDocument? ToDocument(string id, byte[]? meta, byte[]? body)
    {
        if (meta is null || body is null)
        {
            return null;
        }

        var (etag, _, deleted) = StoredFormats.ReadMeta(meta);
        return deleted ? null : new StoredDocument(id, etag, body);
    }
}
