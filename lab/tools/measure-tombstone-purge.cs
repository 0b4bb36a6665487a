#:project ../../src/Engine/Indexing.Engine.csproj
#:property TreatWarningsAsErrors=false
#:property PublishAot=false

// Measures the tombstone purge: how long a purge batch holds the store's writer lock, how fast
// tombstones go, and what a concurrent writer's synced puts see while it runs (against the same
// writer with no purge running). Public API only, as an index owner would drive it.
//
//   dotnet run lab/tools/measure-tombstone-purge.cs -- [tombstones, default 200000] [directory, default a temp one]
//
// Prints one line per phase; run it 3 times and quote medians with `uptime`'s load average.
using System.Diagnostics;
using System.Text;
using Indexing.Storage;

var tombstones = args.Length > 0 ? int.Parse(args[0]) : 200_000;
var directory = args.Length > 1 ? args[1] : Path.Combine(Path.GetTempPath(), "tombstone-purge-" + Guid.NewGuid().ToString("N"));
var body = Encoding.UTF8.GetBytes("""{"customer":{"name":"someone"},"status":"gone","total":12.5}""");
try
{
    // Setup without fsync per write: 100k live documents, then `tombstones` put and deleted.
    using (var setup = DocumentStore.Open(directory, new StoreOptions(syncWrites: false)))
    {
        setup.PutMany(Enumerable.Range(0, 100_000).Select(i => new DocumentWrite($"live/{i:D7}", body)));
        setup.PutMany(Enumerable.Range(0, tombstones).Select(i => new DocumentWrite($"gone/{i:D7}", body)));
        for (var i = 0; i < tombstones; i++)
        {
            setup.Delete($"gone/{i:D7}");
        }
    }

    // Measured with synced writes (the default) and the default purge interval.
    using var store = DocumentStore.Open(directory, new StoreOptions());
    Console.WriteLine($"store: {store.GetStatus().TombstonesHeld:N0} tombstones held, last etag {store.LastEtag:N0}");

    var baseline = Writer(store, () => false, TimeSpan.FromSeconds(5));
    Console.WriteLine($"writer, no purge:     {baseline}");

    var started = Stopwatch.GetTimestamp();
    using var registration = store.RegisterTombstoneWatermark(() => long.MaxValue);
    var during = Writer(store, () => store.GetStatus().TombstonesHeld == 0, TimeSpan.FromMinutes(10));
    var elapsed = Stopwatch.GetElapsedTime(started);
    var status = store.GetTombstoneStatus();
    Console.WriteLine($"writer, during purge: {during}");
    Console.WriteLine(
        $"purge: {status.Purged:N0} tombstones in {elapsed.TotalSeconds:0.00} s ({status.Purged / elapsed.TotalSeconds:N0}/s, " +
        $"the first round starts up to 1 s after registering; compaction of the purged range included); " +
        $"error {status.Error ?? "none"}");
    var hold = status.LockHold;
    Console.WriteLine(
        $"writer lock held per batch: {hold.Count} batches, p50 {hold.P50.TotalMilliseconds:0.00} ms, p90 {hold.P90.TotalMilliseconds:0.00} ms, " +
        $"p99 {hold.P99.TotalMilliseconds:0.00} ms, max {status.LongestLockHold.TotalMilliseconds:0.00} ms");
}
finally
{
    Directory.Delete(directory, recursive: true);
}

// Synced puts of new documents, back to back, until `done` or `limit`: latency percentiles.
static string Writer(DocumentStore store, Func<bool> done, TimeSpan limit)
{
    var latencies = new List<double>();
    var body = Encoding.UTF8.GetBytes("""{"status":"new"}""");
    var until = Stopwatch.GetTimestamp() + (long)(limit.TotalSeconds * Stopwatch.Frequency);
    var n = 0;
    while (Stopwatch.GetTimestamp() < until && (latencies.Count < 200 || !done()))
    {
        var start = Stopwatch.GetTimestamp();
        store.Put($"new/{Guid.NewGuid():N}-{n++}", body);
        latencies.Add(Stopwatch.GetElapsedTime(start).TotalMilliseconds);
        if (latencies.Count >= 200 && done())
        {
            break;
        }
    }

    latencies.Sort();
    double At(double q) => latencies[Math.Min(latencies.Count - 1, (int)(q * latencies.Count))];
    return $"{latencies.Count:N0} synced puts, p50 {At(0.5):0.00} ms, p99 {At(0.99):0.00} ms, max {latencies[^1]:0.00} ms";
}
