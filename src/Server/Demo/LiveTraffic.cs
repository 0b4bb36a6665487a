using System.Diagnostics;
using Indexing.Engine;
using Indexing.Indexer;

namespace Indexing.Server.Demo;

// The live database around a rebuild: writers that update and delete documents, a querier, and a
// foreground reader doing Gets on random ids (the store counts them as the foreground traffic the
// rebuild's prefetcher watches; the reader times them too, in Gets). Bounded: everything stops when disposed.
// The writers update and delete the dataset's own documents (the demo: a live database changes
// what it is rebuilding), or, with keepDataset, documents of their own beside it in the same
// collection (soak: every run must rebuild the same bytes, and updates of rare giants with small
// orders would shrink the dataset run after run).
internal sealed class LiveTraffic : IAsyncDisposable
{
    private readonly CancellationTokenSource _stop = new();
    private readonly Task[] _tasks;
    private long _writes;
    private long _queries;
    private long _failedQueries;
    private string? _lastQueryFailure;
    private int _disposed;

    public LiveTraffic(
        IndexingEngine engine, string indexName, string collection, long documentCount, int writers, TimeSpan writeInterval, bool keepDataset = false)
    {
        var ids = Math.Max(1, documentCount);
        var firstWritten = keepDataset ? ids + 1 : 1;
        var tasks = new List<Task>();
        for (var w = 0; w < writers; w++)
        {
            var seed = w;
            tasks.Add(Task.Run(() => WriteLoop(engine, collection, firstWritten, ids, seed, writeInterval)));
        }

        tasks.Add(Task.Run(() => QueryLoop(engine, indexName)));
        tasks.Add(Task.Run(() => ReadLoop(engine, collection, ids)));
        _tasks = [.. tasks];
    }

    /// <summary>The foreground reader's Get latencies.</summary>
    public GetLatencies Gets { get; } = new();

    public long Writes => Interlocked.Read(ref _writes);

    public long Queries => Interlocked.Read(ref _queries);

    public long FailedQueries => Interlocked.Read(ref _failedQueries);

    public string? LastQueryFailure => Volatile.Read(ref _lastQueryFailure);

    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _stop.CancelAsync().ConfigureAwait(false);
        await Task.WhenAll(_tasks).ConfigureAwait(false);
        _stop.Dispose();
    }

    private static string Id(string collection, long n) => $"{collection}/{n:D8}";

    private async Task WriteLoop(IndexingEngine store, string collection, long firstId, long ids, int seed, TimeSpan interval)
    {
        var random = new Random(seed);
        while (!_stop.IsCancellationRequested)
        {
            var id = Id(collection, firstId + random.NextInt64(ids));
            if (random.Next(10) == 0)
            {
                store.Delete(id);
            }
            else
            {
                store.Put(id, $$"""{"customer":{"name":"live writer {{seed}}","tier":"gold"},"status":"updated","total":{{random.Next(10_000)}}.5,"itemCount":{{random.Next(1, 9)}},"paid":true,"tags":["live"]}""");
            }

            Interlocked.Increment(ref _writes);
            await Delay(interval).ConfigureAwait(false);
        }
    }

    private async Task QueryLoop(IndexingEngine engine, string indexName)
    {
        // Fields both demo definitions have, so the same queries run before and after the swap.
        string[] queries = ["status:updated", "customer:writer", "status:shipped AND total:[100 TO 5000]", "*:*"];
        var n = 0;
        while (!_stop.IsCancellationRequested)
        {
            try
            {
                engine.Query(indexName, new IndexQuery(queries[n++ % queries.Length]) { Take = 10 });
                Interlocked.Increment(ref _queries);
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                Interlocked.Increment(ref _failedQueries);
                Volatile.Write(ref _lastQueryFailure, e.Message);
            }

            await Delay(TimeSpan.FromMilliseconds(20)).ConfigureAwait(false);
        }
    }

    private async Task ReadLoop(IndexingEngine engine, string collection, long ids)
    {
        var random = new Random(1234);
        while (!_stop.IsCancellationRequested)
        {
            var started = Stopwatch.GetTimestamp();
            engine.Get(Id(collection, random.NextInt64(1, ids + 1)));
            Gets.Record(started);
            await Delay(TimeSpan.FromMilliseconds(2)).ConfigureAwait(false);
        }
    }

    private async Task Delay(TimeSpan interval)
    {
        try
        {
            await Task.Delay(interval, _stop.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // stopping
        }
    }
}
