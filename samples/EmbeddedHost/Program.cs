// A host that embeds Indexing.Engine: it loads a few hundred orders, indexes them, changes the index's
// definition while a writer keeps putting orders, waits for the side-by-side swap, checks that queries
// count every matching order (the writer's included), deletes the index and closes the engine.
// Usage: EmbeddedHost [data directory]   (a new temporary directory, removed at the end, when omitted)
// Exit code 0 when every check held; 1, with the failed check on standard error, otherwise.
using System.Text;
using System.Threading.Channels;
using Indexing.Engine;
using Indexing.Indexer;
using Indexing.Storage;

var temporary = args.Length == 0;
var dataDirectory = temporary ? Path.Combine(Path.GetTempPath(), $"embedded-host-{Guid.NewGuid():N}") : args[0];
try
{
    using var timeout = new CancellationTokenSource(TimeSpan.FromMinutes(2));
    await RunAsync(dataDirectory, timeout.Token);
    Console.WriteLine("ok: every check held");
    return 0;
}
catch (Exception e)
{
    Console.Error.WriteLine(e switch
    {
        CheckFailedException => $"FAILED: {e.Message}",
        OperationCanceledException => "FAILED: timed out after 2 minutes, after the last step printed above",
        _ => $"FAILED: {e}",
    });
    return 1;
}
finally
{
    if (temporary && Directory.Exists(dataDirectory))
    {
        Directory.Delete(dataDirectory, recursive: true);
    }
}

static async Task RunAsync(string dataDirectory, CancellationToken timeout)
{
    const string index = "orders-by-status";
    await using var engine = IndexingEngine.Open(new EngineOptions { DataDirectory = dataDirectory });
    Console.WriteLine($"opened {engine.Options.DataDirectory}");

    // Every phase of every rebuild, in order; raised on a thread of the engine's own.
    var events = Channel.CreateUnbounded<RebuildEvent>();
    engine.RebuildChanged += (_, change) => events.Writer.TryWrite(change);
    async Task<string> PhasesUntilEndAsync()
    {
        var phases = new List<RebuildPhase>();
        while (phases.Count == 0 || phases[^1] is not (RebuildPhase.Done or RebuildPhase.Failed or RebuildPhase.Cancelled))
        {
            phases.Add((await events.Reader.ReadAsync(timeout)).Phase);
        }

        return string.Join(" -> ", phases);
    }

    var orders = Enumerable.Range(0, 400).Select(i => new Order($"orders/{i:D5}", i % 3 == 0 ? "shipped" : "pending", i * 37 % 1000)).ToList();
    var loaded = engine.PutMany(orders.Select(o => new DocumentWrite(o.Id, o.Json())), timeout);
    Check(loaded.Documents == orders.Count, $"PutMany stored {loaded.Documents} orders, not {orders.Count}");
    Console.WriteLine($"loaded {loaded.Documents} orders");

    var created = engine.DefineIndex(Definition(index, withTotal: false));
    Check(created == IndexPutResult.Created, $"defining {index} returned {created}, not Created");
    Console.WriteLine($"built {index}: {await PhasesUntilEndAsync()}");

    // A writer puts orders, half of them shipped, until told to stop.
    var written = new List<Order>();
    using var stop = new CancellationTokenSource();
    var writer = Task.Run(() =>
    {
        for (var n = 0; !stop.IsCancellationRequested; n++)
        {
            var order = new Order($"orders/w{n:D5}", n % 2 == 0 ? "shipped" : "pending", n * 53 % 1000);
            engine.Put(order.Id, order.Json());
            lock (written) { written.Add(order); }
        }
    });
    int Written() { lock (written) { return written.Count; } }
    async Task WaitForWritesAsync(int count)
    {
        while (Written() < count && !writer.IsCompleted) { await Task.Delay(10, timeout); }
        Check(!writer.IsFaulted, $"the writer failed: {writer.Exception?.GetBaseException().Message}");
    }

    await WaitForWritesAsync(20);
    var changed = engine.DefineIndex(Definition(index, withTotal: true));
    Check(changed == IndexPutResult.RebuildStarted, $"changing {index} returned {changed}, not RebuildStarted");
    var writtenBefore = Written();
    var phases = await PhasesUntilEndAsync();
    var rebuild = await engine.WaitForRebuildAsync(index, timeout) ?? engine.GetRebuild(index);
    Check(rebuild?.Phase == RebuildPhase.Done, $"the rebuild ended {rebuild?.Phase}: {rebuild?.Error}");
    Console.WriteLine($"rebuilt {index}: {phases}");
    Console.WriteLine($"swapped to generation {rebuild!.Generation} ({rebuild.Reason}); writer put {Written() - writtenBefore} orders during the rebuild");

    // A few more writes after the swap, then the writer stops and the index catches up.
    await WaitForWritesAsync(Written() + 20);
    await stop.CancelAsync();
    await writer;
    var all = orders.Concat(written).ToList();

    // Queries see a write once the index applied it and refreshed its searcher (every 200 ms by
    // default), so each count is given a few seconds to reach what the store holds.
    async Task<QueryResult> QueryAsync(IndexQuery query, Func<Order, bool> matches, string what)
    {
        var expected = all.Count(matches);
        var deadline = DateTime.UtcNow.AddSeconds(10);
        var result = engine.Query(index, query);
        while (result.TotalHits != expected && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50, timeout);
            result = engine.Query(index, query);
        }

        Check(result.TotalHits == expected, $"{query.Text} matched {result.TotalHits} orders, not {expected}");
        Console.WriteLine($"query {query.Text}: {result.TotalHits} hits of {all.Count} orders, {what}");
        return result;
    }

    await QueryAsync(new IndexQuery("status:shipped") { Take = 1 }, o => o.Status == "shipped", "as expected");

    // The field the new definition added, sorted by it.
    var large = await QueryAsync(
        new IndexQuery("status:shipped AND total:[500 TO *]") { Take = 1, Sort = ["-total"] },
        o => o.Status == "shipped" && o.Total >= 500,
        "largest first, as expected");
    var top = all.Single(o => o.Id == large.Hits[0].Id);
    Check(top.Total == all.Where(o => o.Status == "shipped").Max(o => o.Total), $"the top hit {top.Id} is not a largest shipped order");

    var deleted = await engine.DeleteIndexAsync(index);
    Check(engine.ListIndexes().All(i => i.Name != index), $"{index} is still listed after its delete");
    Console.WriteLine($"deleted {deleted.Name}");
    await engine.DisposeAsync();
    Console.WriteLine("closed the engine");
}

static IndexDefinition Definition(string name, bool withTotal) => IndexDefinition.Create(name, "orders",
    withTotal
        ? [new("status", "status", IndexFieldType.Keyword), new("total", "total", IndexFieldType.Long, Sortable: true)]
        : [new("status", "status", IndexFieldType.Keyword)]);

static void Check(bool holds, string failure)
{
    if (!holds) { throw new CheckFailedException(failure); }
}

internal sealed record Order(string Id, string Status, int Total)
{
    public byte[] Json() => Encoding.UTF8.GetBytes($$"""{"status": "{{Status}}", "total": {{Total}}}""");
}

internal sealed class CheckFailedException(string message) : Exception(message);
