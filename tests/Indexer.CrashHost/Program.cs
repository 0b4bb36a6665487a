using Indexing.Indexer;
using Indexing.Storage;

// Usage: <store directory> <index root> <rebuild point> <definition file>
// Opens the store and the index manager, starts a rebuild of the definition's index with that
// definition (or lets a resumed one run), and when the rebuild reaches the named point prints
// "AT <point>" and blocks forever: the test kills the process there. Prints "DONE <phase>" if the
// rebuild ends without reaching the point.
if (args.Length != 4 || !Enum.TryParse<RebuildPoint>(args[2], out var stopAt))
{
    Console.Error.WriteLine($"usage: <store directory> <index root> <one of: {string.Join(", ", Enum.GetNames<RebuildPoint>())}> <definition file>");
    return 2;
}

var definition = IndexDefinition.Parse(File.ReadAllText(args[3]));
using var store = DocumentStore.Open(args[0], new StoreOptions(syncWrites: true, blockCacheBytes: 8 << 20));
var options = new IndexManagerOptions
{
    Prefetch = new Indexing.Prefetcher.PrefetchOptions { BudgetBytes = 4 << 20 },
    SwapLagEtags = 10,
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
await using var manager = IndexManager.Open(args[1], store, options);
manager.CreateOrUpdate(definition);
var progress = await manager.WaitForRebuildAsync(definition.Name);
Console.WriteLine($"DONE {progress?.Phase}");
return 0;
