#:project ../../src/Engine/Indexing.Engine.csproj
#:property TreatWarningsAsErrors=false
#:property PublishAot=false

// What the manager's verify holds in memory: a store of N small documents (default 300,000) and an
// index of them, then verify three times while a thread samples the .NET heap every 2 ms. Prints, per
// run, the heap's peak above its level before the verify, the bytes allocated, and the time. Public
// API only; the store and index are built once in a temp directory (or DIR) and deleted after.
//
//   dotnet run lab/tools/verify-memory.cs -- [documents 300000] [DIR]
//
// Quote the median of the three runs with `uptime`'s load average (benchmarks/results/slow-readers-and-verify.md).
using System.Diagnostics;
using System.Text;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

var documents = args.Length > 0 ? int.Parse(args[0]) : 300_000;
var directory = args.Length > 1 ? args[1] : Path.Combine(Path.GetTempPath(), "verify-memory-" + Guid.NewGuid().ToString("N"));
try
{
    using var store = DocumentStore.Open(Path.Combine(directory, "store"), new StoreOptions(syncWrites: false));
    if (store.LastEtag == 0)
    {
        store.PutMany(Enumerable.Range(0, documents).Select(i =>
            new DocumentWrite($"orders/{i:D8}", Encoding.UTF8.GetBytes($$"""{"status":"s{{i % 13}}","total":{{i}}}"""))));
    }

    await using var manager = IndexManager.Open(
        Path.Combine(directory, "indexes"),
        store,
        static (request, cancellationToken) =>
            Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, startAfterId: request.StartAfterId, cancellationToken: cancellationToken));
    manager.CreateOrUpdate(IndexDefinition.Parse("""
        {"name": "orders", "collection": "orders", "fields": [{"name": "status", "path": "status", "type": "keyword"}, {"name": "total", "path": "total", "type": "long"}]}
        """));
    await manager.WaitForRebuildAsync("orders");
    while (manager.GetSummary("orders").Status.DocumentCount < documents)
    {
        await Task.Delay(100);
    }

    Console.WriteLine($"{documents:N0} documents indexed; GC: {(System.Runtime.GCSettings.IsServerGC ? "server" : "workstation")}, " +
        $"concurrent {System.Runtime.GCSettings.LatencyMode}; {Environment.ProcessorCount} processors");
    for (var run = 1; run <= 3; run++)
    {
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        var baseline = GC.GetTotalMemory(forceFullCollection: true);
        var allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        long peak = baseline;
        using var stop = new CancellationTokenSource();
        var sampler = Task.Factory.StartNew(() =>
        {
            while (!stop.IsCancellationRequested)
            {
                peak = Math.Max(peak, GC.GetTotalMemory(forceFullCollection: false));
                Thread.Sleep(2);
            }
        }, TaskCreationOptions.LongRunning);
        var clock = Stopwatch.StartNew();
        var report = manager.Verify("orders");
        clock.Stop();
        await stop.CancelAsync();
        await sampler;
        var allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
        Console.WriteLine($"run {run}: heap peak {(peak - baseline) / 1048576.0:F1} MiB above {baseline / 1048576.0:F1} MiB, " +
            $"allocated {allocated / 1048576.0:F1} MiB, {clock.Elapsed.TotalSeconds:F2} s, consistent {report.IsConsistent}, {report.StoreDocuments:N0} documents");
    }
}
finally
{
    if (args.Length < 2)
    {
        Directory.Delete(directory, recursive: true);
    }
}
