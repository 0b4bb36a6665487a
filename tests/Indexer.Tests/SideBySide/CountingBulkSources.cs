using System.Collections.Concurrent;
using Indexing.Storage;

namespace Indexing.Indexer.Tests.SideBySide;

// A bulk-source factory around another that records what each bulk phase asked for and read: the
// request (StartAfterId tells a resumed run) and every id the indexer took. Optionally waits before
// each take, to make a short bulk phase last long enough for several bulk commits, and holds the
// feeder once the handed-out prefix holds HoldAfterDocuments (until the build is cancelled), so the
// bulk phase cannot end before the test stops it and its bulk commits can record that prefix as the
// key (counting documents read instead, the adaptive source's prefix could still be empty: a slow
// first range, the others ready), and awaits BeforeTake (given the documents read so far) before
// each take, so a test can hold the feeder until something happened.
internal sealed class CountingBulkSources(BulkSourceFactory inner, TimeSpan delayPerTake = default)
{
    public ConcurrentQueue<BulkSourceRequest> Requests { get; } = new();

    // Set before a bulk phase starts: its feeder waits (until cancelled) once the handed-out prefix holds this many documents.
    public int? HoldAfterDocuments { get; set; }

    // Set before a bulk phase starts: awaited before each take with the number of documents read so far
    // and the source's HandedOutThrough (every document up to it was handed out).
    public Func<int, string?, CancellationToken, Task>? BeforeTake { get; set; }

    // Ids read by the latest bulk phase.
    public ConcurrentQueue<string> Read { get; private set; } = new();

    public IBatchSource Start(BulkSourceRequest request, CancellationToken cancellationToken)
    {
        Requests.Enqueue(request);
        Read = new ConcurrentQueue<string>();
        return new Counting(inner(request, cancellationToken), Read, delayPerTake, HoldAfterDocuments, BeforeTake);
    }

    private sealed class Counting(IBatchSource source, ConcurrentQueue<string> read, TimeSpan delay, int? holdAfter, Func<int, string?, CancellationToken, Task>? beforeTake) : IBatchSource
    {
        public PrefetchPressure Pressure => source.Pressure;

        public long SnapshotEtag => source.SnapshotEtag;

        public string? HandedOutThrough => source.HandedOutThrough;

        public PrefetchPipeline? Pipeline => source.Pipeline;

        public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
        {
            if (delay > TimeSpan.Zero)
            {
                await Task.Delay(delay, cancellationToken);
            }

            if (beforeTake is not null)
            {
                await beforeTake(read.Count, source.HandedOutThrough, cancellationToken);
            }

            if (holdAfter is { } hold && source.HandedOutThrough is { } prefix
                && read.Count(id => DocumentIds.CompareKeyOrder(id, prefix) <= 0) >= hold)
            {
                await Task.Delay(Timeout.Infinite, cancellationToken);
            }

            var batch = await source.TakeAsync(maxDocuments, maxBytes, cancellationToken);
            foreach (var document in batch?.Documents ?? [])
            {
                read.Enqueue(document.Id);
            }

            return batch;
        }

        public ValueTask DisposeAsync() => source.DisposeAsync();
    }
}
