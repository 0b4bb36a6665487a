using Indexing.Prefetcher;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Demo;

// Console tables for the store status and a prefetch run's pressure summary.
internal static class StatusTables
{
    public static void WriteStoreStatus(IAnsiConsole console, StoreStatus status)
    {
        var table = new Table().Title("Store status").AddColumn("figure").AddColumn(new TableColumn("value").RightAligned());
        table.AddRow("path", Markup.Escape(status.Path));
        table.AddRow("last etag", $"{status.LastEtag:N0}");
        table.AddRow("documents (RocksDB estimate)", $"{status.EstimatedDocuments:N0}");
        table.AddRow("live data (estimate)", ByteSize.Format(status.EstimatedLiveDataBytes));
        table.AddRow("live SST files", ByteSize.Format(status.LiveSstFilesBytes));
        table.AddRow("memtables", ByteSize.Format(status.MemtableBytes));
        table.AddRow("block cache used / size", $"{ByteSize.Format(status.BlockCacheUsageBytes)} / {ByteSize.Format(status.BlockCacheCapacityBytes)}");
        table.AddRow("open snapshots / iterators", $"{status.OpenSnapshots} / {status.OpenIterators}");
        table.AddRow("options", Markup.Escape(status.Options));
        console.Write(table);
    }

    private static string Ms(TimeSpan? value) => value is { } v ? $"{v.TotalMilliseconds:0.00} ms" : "-";
}
