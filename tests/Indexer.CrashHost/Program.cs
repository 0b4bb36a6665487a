using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

// Usage: <store directory> <index root> <rebuild point> <definition file> [writer]
// Opens the store and the index manager, starts a rebuild of the definition's index with that
// definition (or lets a resumed one run), and when the rebuild reaches the named point prints
// "AT <point>" and blocks forever: the test kills the process there. Prints "DONE <phase>" if the
// rebuild ends without reaching the point.
//
// With "writer", a thread writes to the store all along, as clients would, until the process is
// killed: puts of new documents orders/w-NNNNNN and deletes of some of them. Around each write it
// prints "PUTTING <id>" / "PUT <id> <etag>" or "DELETING <id>" / "DELETED <id> <etag>" (stdout is
// flushed line by line), so the test knows every write that was acknowledged and the one that
// may have been in flight at the kill.
//
// Usage: bulk <store directory> <index root> <definition file> <percent>
// As above with the writer, but the bulk phase is slowed (20 documents a take, 20 ms after each)
// and commits every 100 ms; once it has made a bulk commit and taken <percent>% of the collection it
// prints "AT bulk <percent>%" and blocks forever (the feeder blocked, the commit loop still running):
// the test kills it there and checks that the restart reads only the ids after the last commit's key.
//
// Usage: shared <store directory> <index root> <percent> <definition file>...
// As bulk, for several indexes over one collection changed at once (one rebuild slot each), so their
// bulk phases share one read (a shared pass, its source slowed as above); once every one of them has
// made a bulk commit and the pass has taken <percent>% of the collection it prints "AT shared
// <percent>%" and blocks forever: the test kills it there and checks that each resumes from its own key.
//
// Usage: delete <store directory> <index root> <delete point> <definition file>
// Opens the store and the index manager over its catalog (the index built by the test), starts a
// rebuild to the definition (its bulk phase slowed to 20 ms a take), and once the rebuild has taken
// its first batch deletes the index; when the delete reaches the named point it prints
// "AT <point>" and blocks forever: the test kills it there. Prints "DONE deleted" if it never does.
//
// Usage: purge <store directory> <index root> <batch>
// Opens the store and the index manager over its catalog, waits until every index has applied and
// committed the whole change feed, then runs one tombstone purge round; once its purge batch number
// <batch> is written it prints "AT purge batch <batch>" and blocks forever: the test kills it there.
if (args.Length == 5 && args[0] == "delete")
{
    return await DeleteUntilKilledAsync(args[1], args[2], Enum.Parse<DeletePoint>(args[3]), args[4]);
}

if (args.Length == 4 && args[0] == "purge")
{
    return await PurgeUntilKilledAsync(args[1], args[2], int.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture));
}

if (args.Length == 5 && args[0] == "bulk")
{
    return await BulkUntilKilledAsync(args[1], args[2], [args[3]], int.Parse(args[4], System.Globalization.CultureInfo.InvariantCulture), "bulk");
}

if (args.Length >= 5 && args[0] == "shared")
{
    return await BulkUntilKilledAsync(args[1], args[2], args[4..], int.Parse(args[3], System.Globalization.CultureInfo.InvariantCulture), "shared");
}

if (args.Length is not (4 or 5) || !Enum.TryParse<RebuildPoint>(args[2], out var stopAt) || (args.Length == 5 && args[4] != "writer"))
{
    Console.Error.WriteLine($"usage: <store directory> <index root> <one of: {string.Join(", ", Enum.GetNames<RebuildPoint>())}> <definition file> [writer]");
    return 2;
}

var definition = IndexDefinition.Parse(File.ReadAllText(args[3]));
using var store = DocumentStore.Open(args[0], new StoreOptions(syncWrites: true, blockCacheBytes: 8 << 20));
var prefetchOptions = new PrefetchOptions { BudgetBytes = 4 << 20 };
var options = new IndexManagerOptions
{
    // Often enough that the bulk phase of the tests' collection makes several bulk commits
    // (BulkCheckpointed): the source below paces it to about 5 ms per take of 20 documents, so the
    // bulk phase lasts several intervals however many threads index it.
    Index = new IndexOptions { SwapLagEtags = 10, BulkCommitInterval = TimeSpan.FromMilliseconds(100), TakeMaxDocuments = 20 },
    RebuildHook = (_, point) =>
    {
        if (point == stopAt)
        {
            Console.WriteLine($"AT {point}");
            Console.Out.Flush();
            Thread.Sleep(Timeout.Infinite);
        }
    },
};
await using var manager = IndexManager.Open(
    args[1],
    store,
    (request, cancellationToken) => new SlowSource(
        Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, prefetchOptions, startAfterId: request.StartAfterId, cancellationToken: cancellationToken),
        _ => Thread.Sleep(5)),
    options);
if (args.Length == 5)
{
    new Thread(() => Write(store)) { IsBackground = true, Name = "writer" }.Start();
}

manager.CreateOrUpdate(definition);
var progress = await manager.WaitForRebuildAsync(definition.Name);
Console.WriteLine($"DONE {progress?.Phase}");
return 0;

// About one write per millisecond plus the fsync; one delete for every three puts.
static void Write(DocumentStore store)
{
    var random = new Random(20);
    var live = new List<string>();
    for (var n = 0; ; n++)
    {
        if (live.Count > 10 && random.Next(4) == 0)
        {
            var victim = live[random.Next(live.Count)];
            live.Remove(victim);
            Console.WriteLine($"DELETING {victim}");
            Console.WriteLine($"DELETED {victim} {store.Delete(victim)}");
        }
        else
        {
            var id = $"orders/w-{n:D6}";
            Console.WriteLine($"PUTTING {id}");
            Console.WriteLine($"PUT {id} {store.Put(id, WrittenBody(n))}");
            live.Add(id);
        }

        Thread.Sleep(1);
    }
}

static string WrittenBody(int n) =>
    $$"""{"customer":{"name":"writer"},"status":"written","total":{{n}},"itemCount":1,"paid":true}""";

static async Task<int> BulkUntilKilledAsync(string storeDirectory, string indexRoot, string[] definitionFiles, int percent, string mode)
{
    var definitions = definitionFiles.Select(file => IndexDefinition.Parse(File.ReadAllText(file))).ToList();
    using var store = DocumentStore.Open(storeDirectory, new StoreOptions(syncWrites: true, blockCacheBytes: 8 << 20));
    long total = store.ScanMetadata(definitions[0].Collection).LongCount();
    var checkpointed = new System.Collections.Concurrent.ConcurrentDictionary<string, bool>();
    var options = new IndexManagerOptions
    {
        Index = new IndexOptions
        {
            SwapLagEtags = 10, BulkCommitInterval = TimeSpan.FromMilliseconds(100), TakeMaxDocuments = 20, MaxConcurrentRebuilds = definitions.Count,
        },
        RebuildHook = (name, point) =>
        {
            if (point == RebuildPoint.BulkCheckpointed)
            {
                checkpointed[name] = true;
            }
        },
    };
    long taken = 0;
    await using var manager = IndexManager.Open(
        indexRoot,
        store,
        (request, cancellationToken) => new SlowSource(
            Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 4 << 20 }, startAfterId: request.StartAfterId, cancellationToken: cancellationToken),
            count =>
            {
                Thread.Sleep(20);
                if (Interlocked.Add(ref taken, count) * 100 >= percent * total && checkpointed.Count == definitions.Count)
                {
                    Console.WriteLine($"AT {mode} {percent}%");
                    Console.Out.Flush();
                    Thread.Sleep(Timeout.Infinite);
                }
            }),
        options);
    new Thread(() => Write(store)) { IsBackground = true, Name = "writer" }.Start();
    foreach (var definition in definitions)
    {
        manager.CreateOrUpdate(definition);
    }

    foreach (var definition in definitions)
    {
        var progress = await manager.WaitForRebuildAsync(definition.Name);
        Console.WriteLine($"DONE {definition.Name} {progress?.Phase}");
    }

    return 0;
}

static async Task<int> DeleteUntilKilledAsync(string storeDirectory, string indexRoot, DeletePoint stopAt, string definitionFile)
{
    var definition = IndexDefinition.Parse(File.ReadAllText(definitionFile));
    using var store = DocumentStore.Open(storeDirectory, new StoreOptions(syncWrites: true, blockCacheBytes: 8 << 20));
    var bulkTaken = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
    var options = new IndexManagerOptions
    {
        Index = new IndexOptions { SwapLagEtags = 10, TakeMaxDocuments = 20 },
        RebuildHook = (_, point) =>
        {
            if (point == RebuildPoint.BulkBatchTaken)
            {
                bulkTaken.TrySetResult();
            }
        },
        DeleteHook = (_, point) =>
        {
            if (point == stopAt)
            {
                Console.WriteLine($"AT {point}");
                Console.Out.Flush();
                Thread.Sleep(Timeout.Infinite);
            }
        },
    };
    await using var manager = IndexManager.Open(
        indexRoot,
        store,
        (request, cancellationToken) => new SlowSource(
            Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 4 << 20 }, startAfterId: request.StartAfterId, cancellationToken: cancellationToken),
            _ => Thread.Sleep(20)),
        options);
    manager.CreateOrUpdate(definition);
    await bulkTaken.Task.WaitAsync(TimeSpan.FromSeconds(60));
    var deleted = await manager.DeleteAsync(definition.Name);
    Console.WriteLine($"DONE deleted (rebuild {deleted.Rebuild?.Phase})");
    return 0;
}

static async Task<int> PurgeUntilKilledAsync(string storeDirectory, string indexRoot, int killAtBatch)
{
    // No background rounds: the one round below runs the whole purge, batch after batch.
    using var store = DocumentStore.Open(storeDirectory, new StoreOptions(syncWrites: true, blockCacheBytes: 8 << 20, tombstonePurgeInterval: TimeSpan.FromHours(1)));
    var index = new IndexOptions { CommitInterval = TimeSpan.FromMilliseconds(100), FollowPollInterval = TimeSpan.FromMilliseconds(20) };
    await using var manager = IndexManager.Open(
        indexRoot,
        store,
        static (request, cancellationToken) => Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, startAfterId: request.StartAfterId, cancellationToken: cancellationToken),
        new IndexManagerOptions { Index = index });
    var deadline = DateTime.UtcNow.AddSeconds(60);
    while (manager.Names.Any(name => manager.GetSummary(name).Status.CommittedEtag < store.LastEtag))
    {
        if (DateTime.UtcNow > deadline)
        {
            Console.WriteLine("TIMEOUT waiting for the indexes to commit the change feed");
            return 1;
        }

        await Task.Delay(20);
    }

    store.PurgeBatchWritten = batch =>
    {
        if (batch == killAtBatch)
        {
            Console.WriteLine($"AT purge batch {batch}");
            Console.Out.Flush();
            Thread.Sleep(Timeout.Infinite);
        }
    };
    var round = store.PurgeTombstones();
    Console.WriteLine($"DONE purged {round.Purged} in {round.Batches} batches");
    return 0;
}

// A bulk source that tells how many documents each take handed out (the host slows and stops the feeder there).
internal sealed class SlowSource(IBatchSource inner, Action<int> taken) : IBatchSource
{
    public PrefetchPressure Pressure => inner.Pressure;

    public long SnapshotEtag => inner.SnapshotEtag;

    public string? HandedOutThrough => inner.HandedOutThrough;

    public PrefetchPipeline? Pipeline => inner.Pipeline;

    public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
    {
        var batch = await inner.TakeAsync(maxDocuments, maxBytes, cancellationToken);
        if (batch is not null)
        {
            taken(batch.Count);
        }

        return batch;
    }

    public ValueTask DisposeAsync() => inner.DisposeAsync();
}
