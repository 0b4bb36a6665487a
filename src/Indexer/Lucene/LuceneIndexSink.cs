using Indexing.Storage;

using Lucene.Net.Analysis.Standard;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;

using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Indexing.Indexer;

// The Lucene index behind IIndexSink: one directory (FSDirectory: MMapDirectory on 64-bit Linux,
// NativeFSLockFactory, so a crashed process leaves no lock behind), one IndexWriter, one
// SearcherManager over the writer for near-real-time queries.
//
// Owns, in creation order: directory, analyzer, writer, searcher manager; disposed in reverse.
// Threading: the writer is thread-safe (each thread adds through its own LuceneSinkWriter);
// commits are serialised by _commitLock so a checkpoint's user data goes with its own commit.
internal sealed class LuceneIndexSink : IIndexSink
{
    private readonly LuceneDirectory _directory;
    private readonly StandardAnalyzer _analyzer;
    private readonly IndexWriter _writer;
    private readonly SearcherManager _searchers;
    private readonly System.Threading.Lock _commitLock = new();
    private int _disposed;
    private int _writerClosed;

    private LuceneIndexSink(
        IndexDefinition definition, LuceneDirectory directory, StandardAnalyzer analyzer, IndexWriter writer, SearcherManager searchers)
    {
        Definition = definition;
        _directory = directory;
        _analyzer = analyzer;
        _writer = writer;
        _searchers = searchers;
        OpenedCheckpoint = IndexCheckpoint.FromUserData(writer.CommitData);
    }

    public IndexDefinition Definition { get; }

    public IndexCheckpoint? OpenedCheckpoint { get; }

    public long DocumentCount
    {
        get
        {
            var searcher = _searchers.Acquire();
            try
            {
                return searcher.IndexReader.NumDocs;
            }
            finally
            {
                _searchers.Release(searcher);
            }
        }
    }

    /// <summary>The analyser documents were written with; queries analyse text the same way (thread-safe).</summary>
    public StandardAnalyzer Analyzer => _analyzer;

    /// <summary>
    /// The writer closed itself after a tragic event (e.g. a disk error during a flush; Lucene then
    /// throws ObjectDisposedException from every call): nothing more can be written until reopened.
    /// </summary>
    public bool WriterClosed => Volatile.Read(ref _writerClosed) != 0;

    /// <summary>Near-real-time searchers for the query side (acquire, search, release).</summary>
    public SearcherManager Searchers => _searchers;

    /// <summary>Opens (creating if needed) the index in <paramref name="path"/>.</summary>
    /// <exception cref="LockObtainFailedException">Another open writer holds the directory.</exception>
    public static LuceneIndexSink Open(string path, IndexDefinition definition, IndexOptions options)
    {
        LuceneDirectory? directory = null;
        StandardAnalyzer? analyzer = null;
        IndexWriter? writer = null;
        SearcherManager? searchers = null;
        try
        {
            directory = options.OpenDirectory?.Invoke(path) ?? FSDirectory.Open(new DirectoryInfo(path));
            analyzer = new StandardAnalyzer(LuceneVersion.LUCENE_48);
            var config = new IndexWriterConfig(LuceneVersion.LUCENE_48, analyzer)
            {
                OpenMode = OpenMode.CREATE_OR_APPEND,
                RAMBufferSizeMB = options.RamBufferSizeMB,
                // One DocumentsWriterPerThread per thread adding at once; the default (8) already
                // covers 16 threads' worth only if we say so.
                MaxThreadStates = Math.Max(8, options.IndexingThreads),
            };
            writer = new IndexWriter(directory, config);
            searchers = new SearcherManager(writer, applyAllDeletes: true, searcherFactory: null);
            return new LuceneIndexSink(definition, directory, analyzer, writer, searchers);
        }
        catch
        {
            searchers?.Dispose();
            writer?.Dispose();
            analyzer?.Dispose();
            directory?.Dispose();
            throw;
        }
    }

    public IIndexSinkWriter CreateWriter()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        return new LuceneSinkWriter(this, new LuceneDocumentMapper(Definition));
    }

    public void Commit(IndexCheckpoint checkpoint)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_commitLock)
        {
            try
            {
                _writer.SetCommitData(checkpoint.ToUserData());
                _writer.Commit();
            }
            catch (ObjectDisposedException)
            {
                NoteClosed();
                throw;
            }
        }
    }

    public void Refresh()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        // Blocking: MaybeRefresh returns at once when another thread is refreshing, and that
        // refresh may have started before the writes this caller wants visible.
        try
        {
            _searchers.MaybeRefreshBlocking();
        }
        catch (ObjectDisposedException)
        {
            NoteClosed();
            throw;
        }
    }

    // An ObjectDisposedException while we have not disposed: the writer closed itself.
    private void NoteClosed()
    {
        if (Volatile.Read(ref _disposed) == 0)
        {
            Volatile.Write(ref _writerClosed, 1);
        }
    }

    public void DeleteAll()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        _writer.DeleteAll();
    }

    /// <summary>
    /// Closes. With <paramref name="keepPending"/> the owner has committed its checkpoint first
    /// (Lucene's close would commit pending writes without one); without it, what was written
    /// since the last commit is rolled back (the index failed, or a build is abandoned).
    /// </summary>
    public void Close(bool keepPending)
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            _searchers.Dispose();
            if (keepPending)
            {
                _writer.Dispose();
            }
            else
            {
                _writer.Rollback();
            }
        }
        finally
        {
            _analyzer.Dispose();
            _directory.Dispose();
        }
    }

    /// <summary>Closes as <see cref="Close"/> does after the owner's checkpoint commit.</summary>
    public void Dispose() => Close(keepPending: true);

    public override string ToString() => $"Lucene index {MessageText.Quote(Definition.Name)}";

    // One thread's writer: its own mapper (reused fields) over the shared IndexWriter.
    private sealed class LuceneSinkWriter(LuceneIndexSink sink, LuceneDocumentMapper mapper) : IIndexSinkWriter
    {
        private readonly IndexWriter _writer = sink._writer;

        public void Upsert(string id, long etag, ExtractedFields fields)
        {
            var term = new Term(LuceneFieldNames.Id, id);
            try
            {
                _writer.UpdateDocument(term, mapper.Map(id, etag, fields));
            }
            catch (ObjectDisposedException)
            {
                sink.NoteClosed();
                throw;
            }
            catch (ArgumentException)
            {
                // Lucene refused this document (e.g. a term longer than 32,766 bytes) and marked
                // the new copy deleted, but an update's delete of the old copy is not applied then:
                // remove it, so the index does not keep a body the store has replaced.
                _writer.DeleteDocuments(term);
                throw;
            }
        }

        public void Delete(string id)
        {
            try
            {
                _writer.DeleteDocuments(new Term(LuceneFieldNames.Id, id));
            }
            catch (ObjectDisposedException)
            {
                sink.NoteClosed();
                throw;
            }
        }
    }
}
