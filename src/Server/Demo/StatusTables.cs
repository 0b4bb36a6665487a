using Indexing.Indexer;
using Indexing.Measurement;
using Indexing.Prefetcher;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Demo;

// Console tables for the store status and a prefetch run's pressure summary.
internal static class StatusTables
{
    // The store keeps bodies of this size and more in blob files (DocumentStore.MinBlobBytes; a test holds them equal).
    internal const long MinBlobBytes = 256 << 10;

    public static void WriteStoreStatus(IAnsiConsole console, StoreStatus status)
    {
        var table = new Table().Title("Store status").AddColumn("figure").AddColumn(new TableColumn("value").RightAligned());
        table.AddRow("path", Markup.Escape(status.Path));
        table.AddRow("last etag", $"{status.LastEtag:N0}");
        table.AddRow("documents (RocksDB estimate)", $"{status.EstimatedDocuments:N0}");
        table.AddRow("live data (estimate)", ByteSize.Format(status.EstimatedLiveDataBytes));
        table.AddRow("live SST files", ByteSize.Format(status.LiveSstFilesBytes));
        table.AddRow($"live blob files (bodies >= {ByteSize.Format(MinBlobBytes)})", $"{ByteSize.Format(status.LiveBlobFilesBytes)}, {ByteSize.Format(status.BlobGarbageBytes)} garbage");
        table.AddRow("memtables", ByteSize.Format(status.MemtableBytes));
        table.AddRow("block cache used / size", $"{ByteSize.Format(status.BlockCacheUsageBytes)} / {ByteSize.Format(status.BlockCacheCapacityBytes)}");
        table.AddRow("open snapshots / iterators", $"{status.OpenSnapshots} / {status.OpenIterators}");
        table.AddRow("tombstones held / purged", $"{status.TombstonesHeld:N0} / {status.TombstonesPurged:N0}");
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
            // Every kept decision (the controller keeps the last 50, steady holds collapsed): the
            // climb from L=2, where it settled, and why.
            var decisions = new Table().Title("Controller decisions: why L went where it went").AddColumn("t").AddColumn("L").AddColumn("kind").AddColumn("reason");
            foreach (var decision in pressure.RecentDecisions)
            {
                decisions.AddRow($"{decision.Elapsed.TotalSeconds:0.0} s", $"{decision.ConcurrencyLimit}", Markup.Escape(decision.Kind), Markup.Escape(decision.Reason));
            }

            console.Write(decisions);
        }
    }

    public static void WriteRebuildReport(IAnsiConsole console, RebuildReport report)
    {
        var rebuild = report.Rebuild;
        var table = new Table().Title($"Side-by-side rebuild of {Markup.Escape(rebuild.IndexName)}: {rebuild.Phase}").AddColumn("figure").AddColumn(new TableColumn("value").RightAligned());
        foreach (var (phase, time) in rebuild.PhaseTimes.OrderBy(p => p.Key))
        {
            table.AddRow($"phase {phase}", $"{time.TotalSeconds:0.00} s");
        }

        var bulk = rebuild.PhaseTimes.GetValueOrDefault(RebuildPhase.Bulk);
        table.AddRow("wall time", $"{report.Elapsed.TotalSeconds:0.00} s");
        table.AddRow("bulk documents / bytes", $"{rebuild.DocumentsDone:N0} / {ByteSize.Format(rebuild.BytesDone)}");
        if (rebuild.ResumedAfter is { } key)
        {
            table.AddRow("bulk resumed after", $"{Markup.Escape(key)} ({rebuild.DocumentsSkipped:N0} documents skipped, not read again)");
        }

        if (rebuild.BulkCommitInterval is { } cadence)
        {
            table.AddRow("bulk commits, cadence at the end (a crash resumes from the last)", $"{rebuild.BulkCommits:N0}, every {cadence.TotalSeconds:0.0} s");
        }

        if (bulk > TimeSpan.Zero)
        {
            table.AddRow("bulk rate", $"{rebuild.DocumentsDone / bulk.TotalSeconds:N0} docs/s, {rebuild.BytesDone / 1e6 / bulk.TotalSeconds:0.0} MB/s");
        }

        if (rebuild.Prefetch is { } pressure)
        {
            table.AddRow("bulk prefetch: mean L, peak in flight + buffered", $"{pressure.MeanConcurrencyLimit:0.00}, {ByteSize.Format(pressure.HighWaterMarkBytes)} of {ByteSize.Format(pressure.BudgetBytes)}");
            table.AddRow("bulk prefetch: indexer waited", $"{pressure.ConsumerWaitTime.TotalSeconds:0.00} s, {pressure.StallCount:N0} stalls");
        }

        table.AddRow("queries served / failed", $"{report.Queries:N0} / {report.FailedQueries:N0}");
        if (report.LastQueryFailure is { } failure)
        {
            table.AddRow("last query failure", Markup.Escape(failure));
        }

        table.AddRow("writes during the rebuild", $"{report.Writes:N0}");
        table.AddRow("foreground Get p50 / p99: idle (5 s before)", $"{Ms(report.IdleGets.P50)} / {Ms(report.IdleGets.P99)} ({report.IdleGets.Count:N0} Gets)");
        if (report.BulkGets is { } bulkGets)
        {
            table.AddRow($"foreground Get p50 / p99: last {report.BulkGetsWindow.TotalSeconds:0} s of the bulk phase", $"{Ms(bulkGets.P50)} / {Ms(bulkGets.P99)} ({bulkGets.Count:N0} Gets)");
        }

        table.AddRow("foreground Get p99 per second of the bulk phase: median / worst", $"{Ms(report.BulkGetP99MedianSecond)} / {Ms(report.BulkGetP99WorstSecond)}");
        var verify = report.Verify;
        table.AddRow("verify", $"{(verify.IsConsistent ? "[green]consistent[/]" : "[red]INCONSISTENT[/]")}: {verify.StoreDocuments:N0} documents, missing {verify.Missing}, extra {verify.Extra}, stale {verify.Stale}, duplicates {verify.Duplicates}, changed during verify {verify.ChangedDuringVerify}");
        if (rebuild.SwapSteps is { } steps)
        {
            table.AddRow("swap steps", Markup.Escape(steps));
        }

        if (rebuild.Note is { } note)
        {
            table.AddRow("note", Markup.Escape(note));
        }

        if (rebuild.Error is { } error)
        {
            table.AddRow("[red]error[/]", Markup.Escape(error));
        }

        console.Write(table);
    }

    private static string Ms(TimeSpan? value) => value is { } v ? $"{v.TotalMilliseconds:0.00} ms" : "-";
}
