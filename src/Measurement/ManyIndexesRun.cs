using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;

using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Measurement;

/// <summary>How several indexes over one collection are built (issue 53's comparison).</summary>
public enum ManyIndexesWay
{
    /// <summary>All at once, through one shared pass (the engine's default).</summary>
    SharedPass,

    /// <summary>One after another (one rebuild slot).</summary>
    OneAfterAnother,

    /// <summary>All at once, each with its own prefetch (no sharing: the way before shared passes).</summary>
    Independent,
}

/// <summary>What one build of several indexes took.</summary>
/// <param name="Way">How they were built.</param>
/// <param name="Device">The device label.</param>
/// <param name="Indexes">How many indexes.</param>
/// <param name="Documents">Documents in the collection.</param>
/// <param name="CollectionBytes">The collection's document bytes (the sum of the bodies).</param>
/// <param name="StoreBytesOnDisk">The store's files on disk.</param>
/// <param name="BytesReadFromStore">Bytes the builds' prefetches read from the store, all sources together.</param>
/// <param name="ProcessReadBytes">The process's read_bytes over the run (/proc/self/io: every read from the disk, index files included); null off Linux.</param>
/// <param name="Sources">Prefetches started (one per shared pass, one per independent build).</param>
/// <param name="Wall">From the first definition to the last build's end.</param>
/// <param name="PeakRssBytes">The process's peak RSS during the run (reset at its start; null off Linux).</param>
/// <param name="Stall">The builds' indexing stall, summed over the indexes (time their threads waited for input).</param>
public sealed record ManyIndexesFigures(
    ManyIndexesWay Way,
    string Device,
    int Indexes,
    long Documents,
    long CollectionBytes,
    long StoreBytesOnDisk,
    long BytesReadFromStore,
    long? ProcessReadBytes,
    int Sources,
    TimeSpan Wall,
    long? PeakRssBytes,
    TimeSpan Stall)
{
    /// <summary>One line of figures, for a log.</summary>
    public override string ToString()
    {
        var io = ProcessReadBytes is { } readBytes ? FormattableString.Invariant($", process read_bytes {ByteSize.Format(readBytes)}") : string.Empty;
        var rss = PeakRssBytes is { } peak ? ByteSize.Format(peak) : "n/a";
        return FormattableString.Invariant(
            $"{Way} on {Device}: {Indexes} indexes, {Documents:N0} documents ({ByteSize.Format(CollectionBytes)}; store {ByteSize.Format(StoreBytesOnDisk)} on disk); read {ByteSize.Format(BytesReadFromStore)} from the store ({(double)BytesReadFromStore / CollectionBytes:0.00}x the collection) in {Sources} prefetch(es){io}; wall {Wall.TotalSeconds:0.0} s; peak RSS {rss}; stall {Stall.TotalSeconds:0.0} s");
    }
}

/// <summary>
/// Builds several new indexes over one collection of a store, one of the <see cref="ManyIndexesWay"/>s,
/// through the product's index manager with the adaptive prefetcher started as the engine starts it
/// (one budget for all prefetches, one memory per device), on the local disk or a modelled
/// one, and measures what the issue asks: bytes read from the store, wall time, peak RSS and the
/// indexer's stall. The indexes are new (first builds): their bulk phase is a rebuild's, without a
/// catch-up to speak of, as nothing writes meanwhile. <c>lab/tools/many-indexes.cs</c> runs it.
/// </summary>
public static class ManyIndexesRun
{
    /// <summary>
    /// Four indexes over the generated orders (the demo's collection), two small fields each: little
    /// to index per byte read, so that on a slow device the reads, not the indexing, set the pace.
    /// </summary>
    public static IReadOnlyList<string> OrdersDefinitions(string collection) =>
    [
        Definition("orders-status-total", collection, ("status", "status", "keyword"), ("total", "total", "double")),
        Definition("orders-customer-items", collection, ("customer", "customer.name", "text"), ("itemCount", "itemCount", "long")),
        Definition("orders-tags-total", collection, ("tags", "tags[]", "keyword"), ("total", "total", "double")),
        Definition("orders-status-items", collection, ("status", "status", "keyword"), ("itemCount", "itemCount", "long")),
    ];

    /// <summary>An index definition's JSON: its name, collection and fields (name, path, type).</summary>
    public static string Definition(string name, string collection, params (string Name, string Path, string Type)[] fields)
    {
        var list = string.Join(", ", fields.Select(f => $$"""{ "name": "{{f.Name}}", "path": "{{f.Path}}", "type": "{{f.Type}}" }"""));
        return $$"""{ "name": "{{name}}", "collection": "{{collection}}", "fields": [ {{list}} ] }""";
    }

    /// <summary>
    /// Opens the store and waits until RocksDB has no compaction left to do (at most <paramref name="timeout"/>),
    /// so that the runs read the store as it stays, and its size on disk is the settled one; false on a timeout.
    /// </summary>
    public static async Task<bool> SettleAsync(string storeDirectory, TimeSpan timeout)
    {
        using var store = DocumentStore.Open(storeDirectory, new StoreOptions());
        return await store.WaitForCompactionsAsync(timeout).ConfigureAwait(false);
    }

    /// <summary>
    /// Runs one build of <paramref name="definitions"/> (JSON) into a new index root under <paramref name="workDirectory"/>;
    /// the shared pass's window is the engine's default unless <paramref name="sharedPassWindow"/> is given.
    /// </summary>
    public static async Task<ManyIndexesFigures> RunAsync(
        string storeDirectory,
        IReadOnlyList<string> definitions,
        ManyIndexesWay way,
        RebuildDevice device,
        string workDirectory,
        bool directReads = true,
        TimeSpan? sharedPassWindow = null,
        CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(definitions);
        ArgumentNullException.ThrowIfNull(device);
        var parsed = definitions.Select(IndexDefinition.Parse).ToList();
        if (parsed.Select(d => d.Collection).Distinct(StringComparer.Ordinal).Count() != 1)
        {
            throw new ArgumentException("the definitions must all index one collection.", nameof(definitions));
        }

        var storeBytes = DirectoryBytes(storeDirectory);
        using var store = DocumentStore.Open(storeDirectory, new StoreOptions(directReads: directReads));
        var collection = parsed[0].Collection;
        var (documents, collectionBytes) = store.ScanMetadata(collection).Aggregate((0L, 0L), (sum, m) => (sum.Item1 + 1, sum.Item2 + m.SizeBytes));

        var model = device.NetworkDisk is { } disk ? new NetworkDiskModel(disk) : null;
        var read = new ConcurrentQueue<long>();
        var indexOptions = new IndexOptions
        {
            MaxConcurrentRebuilds = way == ManyIndexesWay.OneAfterAnother ? 1 : parsed.Count,
            SharedPassWindow = way == ManyIndexesWay.SharedPass ? sharedPassWindow ?? new IndexOptions().SharedPassWindow : TimeSpan.Zero,
        };
        // As the engine starts every prefetch: one budget for all, one memory per device (IndexingEngine.cs).
        var prefetchOptions = new PrefetchOptions
        {
            BudgetBytes = indexOptions.PrefetchBudgetBytes,
            SharedBudget = new SharedPrefetchBudget(indexOptions.PrefetchBudgetBytes),
            Devices = new PrefetchDevices(),
        };
        var root = Path.Combine(workDirectory, $"indexes-{way}-{device.Name}-{Guid.NewGuid():N}");
        ProcessFigures.ResetPeakRss();
        var readBefore = ProcessFigures.ReadBytes();
        var started = Stopwatch.GetTimestamp();
        var manager = IndexManager.Open(
            root,
            store,
            (request, token) => new ReadCounting(
                Prefetch.Start(request.Store, request.Collection, PrefetchStrategy.Adaptive, prefetchOptions, model, startAfterId: request.StartAfterId, cancellationToken: token),
                read),
            new IndexManagerOptions { Index = indexOptions });
        try
        {
            foreach (var definition in parsed)
            {
                manager.CreateOrUpdate(definition);
            }

            var stall = TimeSpan.Zero;
            foreach (var definition in parsed)
            {
                var progress = await manager.WaitForRebuildAsync(definition.Name, cancellationToken).ConfigureAwait(false);
                if (progress?.Phase != RebuildPhase.Done)
                {
                    throw new InvalidOperationException($"the build of {definition.Name} ended {progress?.Phase}: {progress?.Error}");
                }

                stall += manager.GetSummary(definition.Name).Status.StallTime;
            }

            var wall = Stopwatch.GetElapsedTime(started);
            var readAfter = ProcessFigures.ReadBytes();
            return new ManyIndexesFigures(
                way, device.Name, parsed.Count, documents, collectionBytes, storeBytes, read.Sum(), readAfter - readBefore, read.Count, wall, ProcessFigures.PeakRss(), stall);
        }
        finally
        {
            await manager.DisposeAsync().ConfigureAwait(false);
            DeleteQuietly(root);
        }
    }

    private static long DirectoryBytes(string directory) =>
        new DirectoryInfo(directory).EnumerateFiles("*", SearchOption.AllDirectories).Sum(file => file.Length);

    private static void DeleteQuietly(string directory)
    {
        try
        {
            Directory.Delete(directory, recursive: true);
        }
        catch (IOException)
        {
            // Scratch; the caller's work directory goes with it.
        }
    }

    // A bulk source that records, when disposed, how many bytes it read from the store.
    private sealed class ReadCounting(IBatchSource inner, ConcurrentQueue<long> read) : IBatchSource
    {
        public PrefetchPressure Pressure => inner.Pressure;

        public long SnapshotEtag => inner.SnapshotEtag;

        public string? HandedOutThrough => inner.HandedOutThrough;

        public PrefetchPipeline? Pipeline => inner.Pipeline;

        public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default) =>
            inner.TakeAsync(maxDocuments, maxBytes, cancellationToken);

        public async ValueTask DisposeAsync()
        {
            await inner.DisposeAsync().ConfigureAwait(false);
            read.Enqueue(inner.Pressure.BytesRead);
        }
    }
}

/// <summary>The process's own I/O and memory figures from /proc (Linux); null elsewhere.</summary>
internal static class ProcessFigures
{
    /// <summary>Bytes this process caused to be read from storage (/proc/self/io read_bytes).</summary>
    public static long? ReadBytes() => Field("/proc/self/io", "read_bytes:", 1);

    /// <summary>Peak resident set size since the start or the last <see cref="ResetPeakRss"/> (VmHWM).</summary>
    public static long? PeakRss() => Field("/proc/self/status", "VmHWM:", 1024);

    /// <summary>Starts the peak RSS over from the current RSS (writing 5 to /proc/self/clear_refs).</summary>
    public static void ResetPeakRss()
    {
        try
        {
            File.WriteAllText("/proc/self/clear_refs", "5");
        }
        catch (Exception exception) when (exception is IOException or UnauthorizedAccessException)
        {
            // Not Linux, or not allowed: the peak then counts from the process's start.
        }
    }

    private static long? Field(string path, string name, long unit)
    {
        if (!File.Exists(path))
        {
            return null;
        }

        foreach (var line in File.ReadLines(path))
        {
            if (line.StartsWith(name, StringComparison.Ordinal))
            {
                var digits = line[name.Length..].Trim().Split(' ')[0];
                return long.Parse(digits, CultureInfo.InvariantCulture) * unit;
            }
        }

        return null;
    }
}
