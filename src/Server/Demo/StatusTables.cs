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

    public static void WritePressureSummary(IAnsiConsole console, PrefetchPressure pressure, CountingSink sink, TimeSpan elapsed)
    {
        var seconds = Math.Max(elapsed.TotalSeconds, 1e-9);
        var table = new Table().Title($"Prefetch: {Markup.Escape(pressure.Strategy)}, {pressure.State}").AddColumn("figure").AddColumn(new TableColumn("value").RightAligned());
        table.AddRow("documents delivered / planned", $"{sink.Documents:N0} / {pressure.DocumentsPlanned:N0}");
        table.AddRow("bytes delivered", ByteSize.Format(sink.Bytes));
        table.AddRow("wall time", $"{elapsed.TotalSeconds:0.00} s");
        table.AddRow("throughput", $"{sink.Bytes / 1e6 / seconds:0.0} MB/s, {sink.Documents / seconds:N0} docs/s");
        table.AddRow("batches taken", $"{sink.Batches:N0}");
        table.AddRow("duplicates / etags after snapshot", $"{sink.Duplicates} / {sink.EtagsAfterSnapshot}");
        table.AddRow("documents that overtook a larger key", $"{sink.OvertakenDocuments:N0}");
        table.AddRow("mean concurrency (L)", $"{pressure.MeanConcurrencyLimit:0.00}");
        table.AddRow("peak in flight + buffered / budget", $"{ByteSize.Format(pressure.HighWaterMarkBytes)} / {ByteSize.Format(pressure.BudgetBytes)}");
        table.AddRow("largest lone oversized read", ByteSize.Format(pressure.LargestOversizedAdmissionBytes));
        table.AddRow("consumer waited", $"{pressure.ConsumerWaitTime.TotalSeconds:0.00} s ({pressure.ConsumerWaitTime.TotalSeconds / seconds:P1}), {pressure.StallCount:N0} stalls");
        table.AddRow("document size p50 / p99 / max", $"{ByteSize.Format(pressure.DocumentSizeP50Bytes)} / {ByteSize.Format(pressure.DocumentSizeP99Bytes)} / {ByteSize.Format(pressure.DocumentSizeMaxBytes)}");
        table.AddRow("read latency per MiB p50 / p99", $"{Ms(pressure.ReadLatencyPerMiBP50)} / {Ms(pressure.ReadLatencyPerMiBP99)}");
        table.AddRow("foreground Get p99", Ms(pressure.ForegroundP99));
        table.AddRow("last decision", Markup.Escape(pressure.LastDecisionReason ?? "-"));
        console.Write(table);

        if (!pressure.RecentDecisions.IsDefaultOrEmpty)
        {
            var decisions = new Table().Title("Controller decisions (most recent)").AddColumn("t").AddColumn("L").AddColumn("kind").AddColumn("reason");
            foreach (var decision in pressure.RecentDecisions.TakeLast(12))
            {
                decisions.AddRow($"{decision.Elapsed.TotalSeconds:0.0} s", $"{decision.ConcurrencyLimit}", Markup.Escape(decision.Kind), Markup.Escape(decision.Reason));
            }

            console.Write(decisions);
        }
    }

    private static string Ms(TimeSpan? value) => value is { } v ? $"{v.TotalMilliseconds:0.00} ms" : "-";
}
