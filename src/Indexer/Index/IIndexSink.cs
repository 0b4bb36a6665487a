namespace Indexing.Indexer;

// The boundary between "documents in batches" and a search engine. Everything above it (the
// build and follow loops, extraction, checkpoints, failure accounting, metrics) is engine-neutral;
// below it, LuceneIndexSink maps extracted values to Lucene fields and owns the writer. Another
// engine (e.g. an Elasticsearch bulk client for a sharded deployment) would implement these two
// interfaces; queries are engine-specific and stay outside.
//
// Threading: CreateWriter, Commit, Refresh and the properties may be called from any thread;
// each IIndexSinkWriter is used by one thread at a time.
internal interface IIndexSink : IDisposable
{
    /// <summary>The checkpoint of the last commit, as found when the sink opened; null for a new index.</summary>
    IndexCheckpoint? OpenedCheckpoint { get; }

    /// <summary>Live documents as of the last refresh.</summary>
    long DocumentCount { get; }

    /// <summary>A writer for one indexing thread (it keeps per-thread reusable state).</summary>
    IIndexSinkWriter CreateWriter();

    /// <summary>Makes everything written so far durable, with the checkpoint.</summary>
    void Commit(IndexCheckpoint checkpoint);

    /// <summary>Makes everything written so far visible to queries.</summary>
    void Refresh();

    /// <summary>Removes every document (before a bulk build restarts).</summary>
    void DeleteAll();
}

// Writes documents for one thread.
internal interface IIndexSinkWriter
{
    /// <summary>Adds the document, replacing any with the same id.</summary>
    /// <exception cref="ArgumentException">The engine refuses this document (e.g. a term too long); the index itself is fine.</exception>
    void Upsert(string id, long etag, ExtractedFields fields);

    /// <summary>Removes the document with this id, if any.</summary>
    void Delete(string id);
}
