using Indexing.Datasets;
using Indexing.Storage;

namespace Indexing.Indexer.Tests.Index;

// An IBatchSource over documents in memory that reports HandedOutThrough as a sequential reader of
// the store would: the documents are handed out in id order (UTF-8 key order), batchDocuments at a
// time, and after each batch every id up to its last one has been handed out. With startAfter it
// hands out only the ids after it and reports startAfter before the first take, as the prefetcher
// does when a rebuild resumes. beforeTake (given the batch number about to be taken) may wait, so a
// test can hold the feeder at a chosen batch.
internal sealed class KeyedBatchSource : IBatchSource
{
    private readonly List<PrefetchedDocument> _documents;
    private readonly int _batchDocuments;
    private readonly Func<int, CancellationToken, ValueTask>? _beforeTake;
    private int _next;
    private int _batches;
    private string? _handedOutThrough;

    /// <param name="reportTotals">Whether <see cref="Pressure"/> reports the documents' count and bytes from the start, as the prefetcher does once its scan has counted them.</param>
    public KeyedBatchSource(
        IEnumerable<PrefetchedDocument> documents, long snapshotEtag, int batchDocuments, string? startAfter = null, Func<int, CancellationToken, ValueTask>? beforeTake = null, bool reportTotals = false)
    {
        _documents = [.. documents.Where(d => startAfter is null || DocumentIds.CompareKeyOrder(d.Id, startAfter) > 0).Order(Comparer<PrefetchedDocument>.Create((x, y) => DocumentIds.CompareKeyOrder(x.Id, y.Id)))];
        Pressure = new PrefetchPressure
        {
            Strategy = "keyed",
            DocumentsTotal = reportTotals ? _documents.Count : null,
            BytesTotal = reportTotals ? _documents.Sum(d => (long)d.SizeBytes) : null,
        };
        SnapshotEtag = snapshotEtag;
        _batchDocuments = batchDocuments;
        _beforeTake = beforeTake;
        _handedOutThrough = startAfter;
    }

    /// <summary>Generated documents with etags 1, 2, ... in generation order (ids are generated in order too).</summary>
    public static List<PrefetchedDocument> Documents(IEnumerable<GeneratedDocument> generated)
    {
        var etag = 0L;
        return [.. generated.Select(d => new PrefetchedDocument(d.Id, ++etag, d.Utf8Json))];
    }

    public PrefetchPressure Pressure { get; }

    public long SnapshotEtag { get; }

    public string? HandedOutThrough => Volatile.Read(ref _handedOutThrough);

    public PrefetchPipeline? Pipeline => null;

    /// <summary>The ids handed out so far, in order.</summary>
    public List<string> HandedOut { get; } = [];

    /// <summary>The last id of each batch handed out, in order.</summary>
    public List<string> BatchEnds { get; } = [];

    public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        if (_next >= _documents.Count)
        {
            return null;
        }

        if (_beforeTake is not null)
        {
            await _beforeTake(_batches, cancellationToken);
        }

        var batch = _documents.GetRange(_next, Math.Min(Math.Min(_batchDocuments, maxDocuments), _documents.Count - _next));
        _next += batch.Count;
        _batches++;
        HandedOut.AddRange(batch.Select(d => d.Id));
        BatchEnds.Add(batch[^1].Id);
        Volatile.Write(ref _handedOutThrough, batch[^1].Id);
        return new PrefetchBatch(batch, batch.Sum(d => (long)d.SizeBytes), waited: false, handedOutThrough: batch[^1].Id);
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;
}
