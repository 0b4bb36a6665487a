namespace Indexing.Indexer;

// The boundary between the indexing loop and a search engine, writing side. Everything above it
// (DocumentIndex: the build and follow loops, extraction, checkpoints, failure accounting, metrics)
// is engine-neutral and speaks to the engine only through IIndexSink, IIndexSinkWriter and
// IIndexSearcher; below it, the Lucene engine (src/Indexer/Lucene) maps extracted values to Lucene
// fields and owns the writer, the searcher, the query parser and the verify reader. Another engine
// (e.g. an Elasticsearch/OpenSearch bulk client for a sharded deployment) would implement these
// three interfaces: upserts and deletes by id become bulk actions, Commit stores the checkpoint
// with the flushed data, Refresh is a refresh.
//
// Failures: a member throws what the engine throws; the loop wraps it once (IndexWriteException
// naming the index and the document) and counts it, except an ArgumentException from Upsert (the
// engine refuses that one document) and the indexer's own IndexExceptions, which pass as they are.
//
// Threading: CreateWriter, Commit, Refresh, RollbackToLastCommit and the properties may be called
// from any thread; each IIndexSinkWriter is used by one thread at a time.
internal interface IIndexSink
{
    /// <summary>The checkpoint of the last commit, as found when the sink opened; null for a new index.</summary>
    IndexCheckpoint? OpenedCheckpoint { get; }

    /// <summary>The query side over what this sink has written, as of the last <see cref="Refresh"/>.</summary>
    IIndexSearcher Searcher { get; }

    /// <summary>The engine closed itself after a fatal error (e.g. a disk error during a flush): nothing more can be written until reopened.</summary>
    bool WriterClosed { get; }

    /// <summary>Bytes the writer buffers in memory now (added documents and deletes not yet flushed); cheap, 0 once closed.</summary>
    long RamBufferBytes { get; }

    /// <summary>A writer for one indexing thread (it keeps per-thread reusable state).</summary>
    IIndexSinkWriter CreateWriter();

    /// <summary>Makes everything written so far durable, with the checkpoint.</summary>
    void Commit(IndexCheckpoint checkpoint);

    /// <summary>Makes everything written so far visible to queries.</summary>
    void Refresh();

    /// <summary>
    /// Switches the engine to bulk loading (<paramref name="bulk"/>: a bulk build starts) or back to
    /// following. Bulk loading buffers more in memory (<see cref="IndexOptions.BuildRamBufferSizeMB"/>)
    /// and writes no compound files, which cost a copy of every flushed segment; both are undone when
    /// the build ends, so the segments written later are compound again.
    /// </summary>
    void SetBulkLoading(bool bulk);

    /// <summary>The RAM buffer the engine fills before it flushes, now (MB): larger during a bulk build.</summary>
    double RamBufferSizeMB { get; }

    /// <summary>Removes every document (before a bulk build restarts).</summary>
    void DeleteAll();

    /// <summary>
    /// Throws away everything written since the last commit and goes back to it (writer and query view),
    /// for a loop whose applied etag no longer says what the engine holds; returns that commit's
    /// checkpoint (null for an index never committed).
    /// </summary>
    IndexCheckpoint? RollbackToLastCommit();

    /// <summary>
    /// Closes (idempotent). With <paramref name="keepPending"/> the owner has committed its checkpoint
    /// first; without it, what was written since the last commit is discarded (the index failed).
    /// </summary>
    void Close(bool keepPending);
}

// Writes documents for one thread.
internal interface IIndexSinkWriter
{
    /// <summary>
    /// Adds the document without looking for one with the same id (no delete term): only for a build
    /// into an index that holds no document of this id, i.e. a fresh or cleared one fed from a snapshot.
    /// </summary>
    /// <exception cref="ArgumentException">The engine refuses this document (e.g. a term too long); the index itself is fine.</exception>
    void Add(string id, long etag, ExtractedFields fields);

    /// <summary>Adds the document, replacing any with the same id.</summary>
    /// <exception cref="ArgumentException">The engine refuses this document (e.g. a term too long); the index itself is fine.</exception>
    void Upsert(string id, long etag, ExtractedFields fields);

    /// <summary>Removes the document with this id, if any.</summary>
    void Delete(string id);
}
