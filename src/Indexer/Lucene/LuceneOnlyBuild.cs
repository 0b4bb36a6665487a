using Indexing.Storage;

using Lucene.Net.Analysis.Standard;
using Lucene.Net.Index;
using Lucene.Net.Store;
using Lucene.Net.Util;

using LuceneDirectory = Lucene.Net.Store.Directory;

namespace Indexing.Indexer;

/// <summary>
/// The LuceneOnly bound: what Lucene.Net itself does with a definition's field values, extracted
/// beforehand (<see cref="ExtractedDocuments"/>): each document's fields (the same Lucene fields the
/// index maps them to) added with <c>AddDocument</c> into a fresh IndexWriter configured as the
/// index's own writer (same analyzer, RAM buffer, merge scheduler and per-thread states), by
/// <see cref="IndexOptions.IndexingThreads"/> threads at <see cref="IndexOptions.IndexingThreadNice"/>,
/// each taking the next slice of documents cut as a build's takes are
/// (<see cref="IndexOptions.TakeMaxDocuments"/>, <see cref="IndexOptions.TakeMaxBytes"/>).
/// A bulk build of the same documents over the same writer costs this plus the project's own work
/// (reading, the JSON walk, the indexing loop, checkpoints).
/// <para>
/// Timing is the caller's: open outside the clock, time <see cref="AddAsync"/> and
/// <see cref="Commit"/>, dispose outside it, as the IndexOnly bound times a build. Not thread-safe:
/// one caller; <see cref="AddAsync"/> may be called more than once (a collection held in chunks).
/// Owns, in creation order: directory, analyzer, writer; disposed in reverse.
/// </para>
/// </summary>
internal sealed class LuceneOnlyBuild : IDisposable
{
    private readonly LuceneDirectory _directory;
    private readonly StandardAnalyzer _analyzer;
    private readonly IndexWriter _writer;
    private long _documents;
    private long _bytes;
    private long _refused;
    private int _disposed;

    private LuceneOnlyBuild(IndexDefinition definition, IndexOptions options, LuceneDirectory directory, StandardAnalyzer analyzer, IndexWriter writer)
    {
        Definition = definition;
        Options = options;
        _directory = directory;
        _analyzer = analyzer;
        _writer = writer;
    }

    public IndexDefinition Definition { get; }

    public IndexOptions Options { get; }

    /// <summary>Documents added so far.</summary>
    public long Documents => Interlocked.Read(ref _documents);

    /// <summary>Body bytes of the documents added so far.</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Documents Lucene refused (e.g. a keyword term over 32,766 bytes); the build counts them as failed too.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>Opens a writer on a new, empty index in <paramref name="path"/> (created if missing).</summary>
    /// <exception cref="InvalidOperationException">The directory already holds an index.</exception>
    public static LuceneOnlyBuild Open(string path, IndexDefinition definition, IndexOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(definition);
        OptionProblems.ThrowIfInvalid(new IndexOptionsValidator(), options);
        System.IO.Directory.CreateDirectory(path);
        LuceneDirectory? directory = null;
        StandardAnalyzer? analyzer = null;
        try
        {
            directory = FSDirectory.Open(new DirectoryInfo(path));
            if (DirectoryReader.IndexExists(directory))
            {
                throw new InvalidOperationException(
                    $"{MessageText.QuotePath(path)} already holds an index; the LuceneOnly bound builds a fresh one: give it a new directory.");
            }

            analyzer = new StandardAnalyzer(LuceneVersion.LUCENE_48);
            var writer = LuceneIndexSink.OpenWriter(directory, analyzer, options);
            return new LuceneOnlyBuild(definition, options, directory, analyzer, writer);
        }
        catch
        {
            analyzer?.Dispose();
            directory?.Dispose();
            throw;
        }
    }

    /// <summary>Adds every document of <paramref name="documents"/> with <see cref="IndexOptions.IndexingThreads"/> threads; completes when all are added.</summary>
    public async Task AddAsync(ExtractedDocuments documents, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(documents);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (!ReferenceEquals(documents.Definition, Definition))
        {
            throw new ArgumentException(
                $"the documents were extracted for index '{documents.Definition.Name}', but this build is for '{Definition.Name}'; extract them with this build's definition.",
                nameof(documents));
        }

        var slices = Slices(documents);
        var next = -1;
        var workers = new Task[Options.IndexingThreads];
        for (var i = 0; i < workers.Length; i++)
        {
            workers[i] = IndexingThread.Start($"lucene-only-{i + 1}", Options.IndexingThreadNice, () =>
            {
                var mapper = new LuceneDocumentMapper(Definition);
                var buffer = new ExtractedFields(Definition);
                int slice;
                while ((slice = Interlocked.Increment(ref next)) < slices.Count)
                {
                    var (from, to) = slices[slice];
                    for (var d = from; d < to; d++)
                    {
                        cancellationToken.ThrowIfCancellationRequested();
                        Add(documents, d, mapper, buffer);
                    }
                }
            });
        }

        await Task.WhenAll(workers).ConfigureAwait(false);
    }

    /// <summary>Commits what was added (the build's last commit).</summary>
    public void Commit()
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        _writer.Commit();
    }

    /// <summary>Closes the writer (waiting for running merges) and the directory; the files stay for the caller to delete.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        try
        {
            _writer.Dispose();
        }
        finally
        {
            _analyzer.Dispose();
            _directory.Dispose();
        }
    }

    private void Add(ExtractedDocuments documents, int index, LuceneDocumentMapper mapper, ExtractedFields buffer)
    {
        documents.CopyTo(index, buffer);
        try
        {
            _writer.AddDocument(mapper.Map(documents.Id(index), documents.Etag(index), buffer));
        }
        catch (ArgumentException)
        {
            // Lucene refused this one document, as a build's Upsert would report it; the index is fine.
            Interlocked.Increment(ref _refused);
            return;
        }

        Interlocked.Increment(ref _documents);
        Interlocked.Add(ref _bytes, documents.BodyBytes(index));
    }

    // Runs of consecutive documents as a build's takes cut them: at most TakeMaxDocuments and
    // TakeMaxBytes each (one larger document alone).
    private List<(int From, int To)> Slices(ExtractedDocuments documents)
    {
        var slices = new List<(int, int)>();
        var from = 0;
        long bytes = 0;
        for (var d = 0; d < documents.Count; d++)
        {
            var size = documents.BodyBytes(d);
            if (d > from && (d - from == Options.TakeMaxDocuments || bytes + size > Options.TakeMaxBytes))
            {
                slices.Add((from, d));
                from = d;
                bytes = 0;
            }

            bytes += size;
        }

        if (from < documents.Count)
        {
            slices.Add((from, documents.Count));
        }

        return slices;
    }
}
