using Indexing.Storage;

using Lucene.Net.Analysis.Standard;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;

using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Indexing.Indexer;

// The Lucene engine's writing side (IIndexSink): one directory (FSDirectory: MMapDirectory on 64-bit
// Linux, NativeFSLockFactory, so a crashed process leaves no lock behind), one IndexWriter, one
// SearcherManager over the writer for near-real-time queries, which its LuceneIndexSearcher reads.
//
// Owns, in creation order: directory, analyzer, writer, searcher manager; disposed in reverse.
// A rollback (RollbackToLastCommit) replaces the writer and the searcher manager with new ones
// opened at the last commit; both fields are read with Volatile, so each call uses one pair.
// Threading: the writer is thread-safe (each thread adds through its own LuceneSinkWriter);
// commits, refreshes and rollbacks are serialised by _engineLock, so a checkpoint's user data goes
// with its own commit and no refresh runs on a writer being replaced. Queries take no lock: they
// acquire a searcher from the manager current at the time and release it to that same manager.
internal sealed class LuceneIndexSink : IIndexSink
{
    private readonly LuceneDirectory _directory;
    private readonly StandardAnalyzer _analyzer;
    private readonly IndexOptions _options;
    private readonly System.Threading.Lock _engineLock = new();
    private IndexWriter _writer;
    private SearcherManager _searchers;
    private int _disposed;
    private int _writerClosed;

    private LuceneIndexSink(
        IndexDefinition definition, IndexOptions options, LuceneDirectory directory, StandardAnalyzer analyzer, IndexWriter writer, SearcherManager searchers)
    {
        Definition = definition;
        _options = options;
        _directory = directory;
        _analyzer = analyzer;
        _writer = writer;
        _searchers = searchers;
        OpenedCheckpoint = IndexCheckpoint.FromUserData(writer.CommitData);
        Searcher = new LuceneIndexSearcher(this, definition);
    }

    public IndexDefinition Definition { get; }

    public IndexCheckpoint? OpenedCheckpoint { get; }

    public IIndexSearcher Searcher { get; }

    /// <summary>The analyser documents were written with; queries analyse text the same way (thread-safe).</summary>
    public StandardAnalyzer Analyzer => _analyzer;

    /// <summary>
    /// The writer closed itself after a tragic event (e.g. a disk error during a flush; Lucene then
    /// throws ObjectDisposedException from every call): nothing more can be written until reopened.
    /// </summary>
    public bool WriterClosed => Volatile.Read(ref _writerClosed) != 0;

    /// <summary>
    /// Bytes the writer buffers in RAM now (documents added and deletes not yet flushed to a segment);
    /// bounded by <see cref="IndexOptions.RamBufferSizeMB"/> per writer. Cheap (two counters); 0 once closed.
    /// </summary>
    public long RamBufferBytes
    {
        get
        {
            try
            {
                return Writer.RamSizeInBytes();
            }
            catch (ObjectDisposedException)
            {
                return 0;
            }
        }
    }

    private IndexWriter Writer => Volatile.Read(ref _writer);

    /// <summary>
    /// A near-real-time searcher for the query side (<see cref="LuceneIndexSearcher"/>); disposing the
    /// lease releases it to the manager it came from (a rollback may have replaced that manager meanwhile).
    /// </summary>
    public SearcherLease AcquireSearcher()
    {
        while (true)
        {
            var searchers = Volatile.Read(ref _searchers);
            try
            {
                return new SearcherLease(searchers, searchers.Acquire());
            }
            catch (ObjectDisposedException) when (!ReferenceEquals(searchers, Volatile.Read(ref _searchers)))
            {
                // Closed by a rollback between the read and the acquire: the new manager serves.
            }
        }
    }

    /// <summary>Opens (creating if needed) the index in the existing directory <paramref name="path"/>.</summary>
    /// <exception cref="IndexWriteException">Another open writer holds the directory.</exception>
    /// <exception cref="IOException">The index cannot be read (a damaged commit is a CorruptIndexException, an IOException).</exception>
    /// <exception cref="InvalidDataException">The last commit's checkpoint is unreadable.</exception>
    public static LuceneIndexSink Open(string path, IndexDefinition definition, IndexOptions options) =>
        Open(path, definition, options, static at => FSDirectory.Open(new DirectoryInfo(at)));

    /// <summary>Opens the index as <see cref="Open(string, IndexDefinition, IndexOptions)"/> does, in the directory <paramref name="openDirectory"/> opens (fault-injection tests wrap the real one).</summary>
    public static LuceneIndexSink Open(string path, IndexDefinition definition, IndexOptions options, Func<string, LuceneDirectory> openDirectory)
    {
        LuceneDirectory? directory = null;
        StandardAnalyzer? analyzer = null;
        IndexWriter? writer = null;
        SearcherManager? searchers = null;
        try
        {
            directory = openDirectory(path);
            analyzer = new StandardAnalyzer(LuceneVersion.LUCENE_48);
            writer = OpenWriter(directory, analyzer, options);
            searchers = new SearcherManager(writer, applyAllDeletes: true, searcherFactory: null);
            return new LuceneIndexSink(definition, options, directory, analyzer, writer, searchers);
        }
        catch (Exception exception)
        {
            searchers?.Dispose();
            writer?.Dispose();
            analyzer?.Dispose();
            directory?.Dispose();
            if (exception is LockObtainFailedException)
            {
                throw new IndexWriteException(
                    definition.Name, null,
                    $"its directory {MessageText.QuotePath(path)} is locked by another open writer (write.lock); close that index first, one writer per directory.",
                    exception);
            }

            throw;
        }
    }

    /// <summary>
    /// The checkpoint of the last commit in <paramref name="path"/>, read without opening a writer
    /// (no lock is taken, so an index open elsewhere is read as it was last committed); null when
    /// there is no index there or its commit holds no checkpoint of ours.
    /// </summary>
    public static IndexCheckpoint? ReadLastCommit(string path)
    {
        if (!System.IO.Directory.Exists(path))
        {
            return null;
        }

        using var directory = FSDirectory.Open(new DirectoryInfo(path));
        if (!DirectoryReader.IndexExists(directory))
        {
            return null;
        }

        var commit = new SegmentInfos();
        commit.Read(directory);
        return IndexCheckpoint.FromUserData(commit.UserData);
    }

    // A config belongs to one writer, so each (re)open makes its own. LuceneOnlyBuild opens its
    // writer here too, so the bound and the index are configured alike.
    internal static IndexWriter OpenWriter(LuceneDirectory directory, StandardAnalyzer analyzer, IndexOptions options) =>
        new(directory, new IndexWriterConfig(LuceneVersion.LUCENE_48, analyzer)
        {
            OpenMode = OpenMode.CREATE_OR_APPEND,
            RAMBufferSizeMB = options.RamBufferSizeMB,
            // One DocumentsWriterPerThread per thread adding at once; the default (8) already
            // covers 16 threads' worth only if we say so.
            MaxThreadStates = Math.Max(8, options.IndexingThreads),
            MergeScheduler = new LowPriorityMergeScheduler(options.IndexingThreadNice),
        });

    public IIndexSinkWriter CreateWriter()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        return new LuceneSinkWriter(this, new LuceneDocumentMapper(Definition));
    }

    public void Commit(IndexCheckpoint checkpoint)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_engineLock)
        {
            var writer = Writer;
            try
            {
                writer.SetCommitData(checkpoint.ToUserData());
                writer.Commit();
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
        lock (_engineLock)
        {
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
    }

    /// <summary>
    /// Throws away everything written since the last commit and reopens the writer and the query
    /// view at that commit: after a failed flush Lucene has dropped the documents it had buffered, so
    /// only the commit still says what the index holds. Queries running meanwhile finish on the
    /// searcher they hold. Returns the commit's checkpoint (null for an index never committed).
    /// </summary>
    /// <exception cref="LockObtainFailedException">The old writer could not release its lock.</exception>
    public IndexCheckpoint? RollbackToLastCommit()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_engineLock)
        {
            var oldWriter = _writer;
            var oldSearchers = _searchers;
            try
            {
                oldWriter.Rollback();
            }
            catch (Exception exception) when (exception is not OutOfMemoryException)
            {
                // A writer that closed itself after a tragic event has nothing left to undo; one that
                // could not let go of its lock makes the open below fail, and that failure speaks.
            }

            var writer = OpenWriter(_directory, _analyzer, _options);
            SearcherManager searchers;
            try
            {
                searchers = new SearcherManager(writer, applyAllDeletes: true, searcherFactory: null);
            }
            catch
            {
                writer.Rollback();
                throw;
            }

            Volatile.Write(ref _writer, writer);
            Volatile.Write(ref _searchers, searchers);
            Volatile.Write(ref _writerClosed, 0);
            oldSearchers.Dispose();
            return IndexCheckpoint.FromUserData(writer.CommitData);
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

    public void SetBulkLoading(bool bulk)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_engineLock)
        {
            // Both are live settings of the writer (LiveIndexWriterConfig): they apply from the next flush.
            var config = Writer.Config;
            config.RAMBufferSizeMB = bulk ? _options.BuildRamBufferSizeMB : _options.RamBufferSizeMB;
            config.UseCompoundFile = !bulk;
        }
    }

    public double RamBufferSizeMB => Writer.Config.RAMBufferSizeMB;

    public void DeleteAll()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        Writer.DeleteAll();
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

        lock (_engineLock)
        {
            CloseEngine(keepPending);
        }
    }

    private void CloseEngine(bool keepPending)
    {
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

    public override string ToString() => $"Lucene index {MessageText.Quote(Definition.Name)}";

    // One thread's writer: its own mapper (reused fields) over the shared IndexWriter.
    // Reads the sink's writer on every call: a rollback may have replaced it.
    private sealed class LuceneSinkWriter(LuceneIndexSink sink, LuceneDocumentMapper mapper) : IIndexSinkWriter
    {
        // No delete term: UpdateDocument buffers one per document, applied at every flush, which a
        // fresh build (every id new) does not need. A document Lucene refuses part-way is marked
        // deleted by Lucene itself.
        public void Add(string id, long etag, ExtractedFields fields)
        {
            try
            {
                sink.Writer.AddDocument(mapper.Map(id, etag, fields));
            }
            catch (ObjectDisposedException)
            {
                sink.NoteClosed();
                throw;
            }
        }

        public void Upsert(string id, long etag, ExtractedFields fields)
        {
            var term = new Term(IndexFieldNames.Id, id);
            var writer = sink.Writer;
            try
            {
                writer.UpdateDocument(term, mapper.Map(id, etag, fields));
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
                writer.DeleteDocuments(term);
                throw;
            }
        }

        public void Delete(string id)
        {
            try
            {
                sink.Writer.DeleteDocuments(new Term(IndexFieldNames.Id, id));
            }
            catch (ObjectDisposedException)
            {
                sink.NoteClosed();
                throw;
            }
        }
    }
}
