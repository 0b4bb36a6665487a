using System.Runtime.InteropServices;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.Json.Serialization;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Measurement;
using Indexing.Prefetcher;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Measurement.Measure;

/// <summary>
/// The comparison: a console table (medians, ratios to FixedBatch and to the bound max(BestFixed,
/// IndexOnly); ReadOnly judged against BestFixed), the JSON file
/// (everything in the table, every run, the load's bad lines, the size profile, the definition and
/// the settings), and the adaptive median run's timeline as CSV and SVG when asked.
/// </summary>
internal sealed class MeasureReport(
    MeasureSettings settings,
    LoadOutcome load,
    CollectionCensus census,
    CollectionCount collection,
    SizeProfile profile,
    IndexDefinition definition,
    StringFieldSurvey? survey,
    RebuildWorkload workload,
    IReadOnlyList<ModeSummary> summaries)
{
    private static readonly JsonSerializerOptions _json = new()
    {
        WriteIndented = true,
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.Never,
        Converters = { new JsonStringEnumConverter() },
    };

    public void Write(IAnsiConsole console)
    {
        console.Write(Table());
        var bound = summaries.Where(s => s.IsBound).MaxBy(s => s.WallSeconds);
        var adaptive = Summary(RebuildMode.Adaptive);
        if (bound is not null)
        {
            var fixedL = bound.FixedConcurrency is { } l ? $", L={l}" : "";
            var judged = adaptive is null ? "" : $" Adaptive took {adaptive.RatioToBound:0.00}x the bound{(adaptive.RatioToFixedBatch is { } toFixed ? $" and {toFixed:0.00}x FixedBatch" : "")}.";
            console.MarkupLineInterpolated(
                $"Bound: [bold]{bound.Mode}[/] ({bound.WallSeconds:0.00} s{fixedL}) — {(bound.Mode == RebuildMode.IndexOnly ? "indexing" : "reading")} is the slower half on this data and device.{judged}");
        }

        if (IndexingAgainstLucene() is { } indexing)
        {
            console.MarkupLineInterpolated(
                $"Indexing alone: IndexOnly took [bold]{indexing.Ratio:0.00}x[/] LuceneOnly's time ({indexing.IndexOnly.MegabytesPerSecond:0.0} against {indexing.LuceneOnly.MegabytesPerSecond:0.0} MB/s, Lucene.Net alone on the values extracted beforehand), {MeasureRunner.IndexOptionsOf(settings).IndexingThreads} indexing thread(s).");
        }

        if (ReadingAgainstBestFixed() is { } reading)
        {
            var ramp = reading.ReadOnly.MedianRun.TimeTo80PercentOfFinalRate is { } time ? $"; 80% of its final MB/s after {time.TotalSeconds:0.0} s" : "";
            console.MarkupLineInterpolated(
                $"Reading alone: the controller (ReadOnly) delivered [bold]{reading.ReadOnly.MegabytesPerSecond:0.0} MB/s[/], {reading.Ratio:0.00}x BestFixed's {reading.BestFixed.MegabytesPerSecond:0.0} MB/s at L={reading.BestFixed.FixedConcurrency}{ramp}.");
        }

        WriteJson(settings.JsonFile, ToJson());
        console.MarkupLineInterpolated($"Results written to [bold]{settings.JsonFile}[/]");
        if (settings.TimelineFile is { } csv && (adaptive ?? Summary(RebuildMode.ReadOnly)) is { } timed)
        {
            var run = timed.MedianRun;
            var svg = TimelineSvgPath(csv);
            var what = timed.Mode == RebuildMode.Adaptive ? "Adaptive rebuild" : "Adaptive reading alone (ReadOnly)";
            AtomicFile.ReplaceByPath(csv, temp => RebuildTimelineFiles.WriteCsv(temp, run.Timeline));
            AtomicFile.ReplaceByPath(svg, temp => RebuildTimelineFiles.WriteSvg(temp,
                $"{what} of {collection.Name} from {Path.GetFileName(settings.InputFile)} on {settings.Device.Name}: " +
                $"{run.Elapsed.TotalSeconds:0.0} s, median of {timed.Runs.Count}", run.Timeline));
            console.MarkupLineInterpolated($"Timeline of the median {timed.Mode} run: [bold]{csv}[/] and [bold]{svg}[/]");
        }
    }

    private ModeSummary? Summary(RebuildMode mode) => summaries.SingleOrDefault(s => s.Mode == mode);

    // ReadOnly's median MB/s over BestFixed's, when both were measured.
    private (ModeSummary ReadOnly, ModeSummary BestFixed, double Ratio)? ReadingAgainstBestFixed() =>
        Summary(RebuildMode.ReadOnly) is { } readOnly && Summary(RebuildMode.BestFixed) is { } bestFixed
            ? (readOnly, bestFixed, readOnly.MegabytesPerSecond / bestFixed.MegabytesPerSecond)
            : null;

    // IndexOnly's median wall time over LuceneOnly's, when both were measured: the project's own indexing overhead.
    private (ModeSummary IndexOnly, ModeSummary LuceneOnly, double Ratio)? IndexingAgainstLucene() =>
        Summary(RebuildMode.IndexOnly) is { } indexOnly && Summary(RebuildMode.LuceneOnly) is { } luceneOnly
            ? (indexOnly, luceneOnly, indexOnly.WallSeconds / luceneOnly.WallSeconds)
            : null;

    /// <summary>The JSON file when nothing could be measured: the settings, the load and its bad lines, and why.</summary>
    public static void WriteUnmeasured(MeasureSettings settings, LoadOutcome load, string reason) =>
        WriteJson(settings.JsonFile, new MeasureJson(
            DateTimeOffset.UtcNow, Machine(), Settings(settings), Input(settings, load), reason,
            null, null, null, null, null, null, null, null, null, null, null, null, null, null));

    private static void WriteJson(string path, MeasureJson json) =>
        AtomicFile.Replace(path, stream => JsonSerializer.Serialize(stream, json, _json));

    private static MachineJson Machine() =>
        new(Environment.ProcessorCount, RuntimeInformation.OSDescription, RuntimeInformation.FrameworkDescription);

    private static SettingsJson Settings(MeasureSettings settings)
    {
        var disk = settings.Device.NetworkDisk;
        return new SettingsJson(
            settings.Repeat,
            settings.Device.Name,
            disk is null ? null : new NetworkDiskJson(disk.RequestLatency.TotalMilliseconds, disk.StreamBandwidthBytesPerSecond / 1e6, disk.UsefulQueueDepth, disk.DeviceBandwidthBytesPerSecond / 1e6),
            RebuildWorkload.SmallTakes.TakeMaxBytes,
            RebuildWorkload.SmallTakes.TakeMaxDocuments,
            settings.IndexingThreads,
            MeasureRunner.IndexOptionsOf(settings).IndexingThreadNice,
            PrefetchOptions.DefaultBudgetBytes,
            settings.MaxDocumentBytes,
            settings.InMemoryLimitBytes);
    }

    private static InputJson Input(MeasureSettings settings, LoadOutcome load)
    {
        var result = load.Result;
        return new InputJson(Path.GetFullPath(settings.InputFile), load.FileBytes, result.Lines, result.Stored, result.Failed, result.Bytes, load.Elapsed.TotalSeconds,
            [.. result.Errors.Select(e => new LineErrorJson(e.Line, e.Id, e.Rule, e.Message))], result.ErrorsNotListed);
    }

    /// <summary>The plot goes next to the CSV, with the extension .svg.</summary>
    public static string TimelineSvgPath(string csvPath) => Path.ChangeExtension(csvPath, ".svg");

    private Table Table()
    {
        var table = new Table()
            .Title($"{Markup.Escape(collection.Name)}: {workload.Documents:N0} documents, {ByteSize.Format(workload.Bytes)}, on {settings.Device.Name}; medians of {settings.Repeat}")
            .AddColumns("run", "wall s", "x FixedBatch", "x bound", "docs/s", "MB/s", "stall", "peak held", "mean L", "cores", "wall range s")
            .Caption("x bound: wall time over max(BestFixed, IndexOnly). BestFixed: reading alone at the fastest fixed L (in mean L); " +
                "ReadOnly: reading alone, the controller choosing L. stall: time the indexer waited for documents. " +
                "LuceneOnly: Lucene.Net alone on the field values extracted beforehand (IndexOnly over it is the indexer's own overhead). " +
                "peak held: most bytes in flight + buffered. mean L: mean read concurrency. cores: processor time over wall time (the whole process). " +
                "Bounds, ReadOnly and LuceneOnly in grey.");
        foreach (var column in table.Columns.Skip(1))
        {
            column.RightAligned();
        }

        foreach (var s in summaries)
        {
            table.AddRow(
                s.IsReference ? $"[grey]{s.Mode}[/]" : $"[bold]{s.Mode}[/]",
                $"{s.WallSeconds:0.00}",
                s.RatioToFixedBatch is { } toFixed ? $"{toFixed:0.00}" : "-",
                s.RatioToBound is { } toBound ? $"{toBound:0.00}" : "-",
                $"{s.DocumentsPerSecond:N0}",
                $"{s.MegabytesPerSecond:0.0}",
                s.IndexerStallPercent is { } stall ? $"{stall:0.0}%" : "-",
                s.PeakInFlightAndBufferedBytes is { } peak ? ByteSize.Format(peak) : "-",
                s.FixedConcurrency is { } fixedL ? $"{fixedL} fixed" : s.MeanConcurrency is { } mean ? $"{mean:0.0}" : "-",
                s.MeanCoresBusy is { } cores ? $"{cores:0.00}" : "-",
                $"{s.MinWallSeconds:0.00}-{s.MaxWallSeconds:0.00}");
        }

        return table;
    }

    private MeasureJson ToJson()
    {
        return new MeasureJson(
            DateTimeOffset.UtcNow,
            Machine(),
            Settings(settings),
            Input(settings, load),
            null,
            load.Result.Stored - census.Documents,
            [.. census.Collections.Select(c => new CollectionJson(c.Name, c.Documents, c.Bytes))],
            census.WithoutCollection,
            collection.Name,
            new SizeProfileJson(profile.Count, profile.TotalBytes, profile.MinBytes, profile.P50Bytes, profile.P90Bytes, profile.P99Bytes, profile.MaxBytes,
                profile.MeanBytes, profile.PercentileRelativeError, profile.DecileMeanBytes, profile.KeyOrderGrowth),
            survey is null ? Path.GetFullPath(settings.DefinitionFile!) : "default: every string field of the collection as text",
            JsonNode.Parse(definition.ToJson())!,
            summaries.Where(s => s.IsBound).MaxBy(s => s.WallSeconds)?.Mode,
            ReadingAgainstBestFixed()?.Ratio,
            IndexingAgainstLucene()?.Ratio,
            Summary(RebuildMode.ReadOnly)?.MedianRun.TimeTo80PercentOfFinalRate?.TotalSeconds,
            Decisions(RebuildMode.Adaptive),
            Decisions(RebuildMode.ReadOnly),
            [.. summaries.Select(s => new ModeJson(
                s.Mode,
                s.IsBound,
                s.FixedConcurrency,
                s.WallSeconds,
                s.RatioToFixedBatch,
                s.RatioToBound,
                s.DocumentsPerSecond,
                s.MegabytesPerSecond,
                s.IndexerStallPercent,
                s.PeakInFlightAndBufferedBytes,
                s.MeanConcurrency,
                s.PeakWorkingSetBytes,
                s.MeanCoresBusy,
                [.. s.Runs.Select(r => new RunJson(
                    r.Elapsed.TotalSeconds, r.DocumentsPerSecond, r.MegabytesPerSecond, r.IndexerStallPercent, r.PeakInFlightAndBufferedBytes,
                    r.MeanConcurrency, r.PeakWorkingSetBytes, r.IndexOnlyChunks, r.IndexOnlyLoadingTime?.TotalSeconds,
                    r.TimeTo80PercentOfFinalRate?.TotalSeconds, r.FixedConcurrency, r.ProcessorTime?.TotalSeconds, r.Commits,
                    r.BestFixedSweep.IsEmpty ? null : [.. r.BestFixedSweep.Select(f => new FixedRunJson(f.Concurrency, f.Elapsed.TotalSeconds, f.MegabytesPerSecond))]))]))]);
    }

    // The controller's recent decisions in the mode's median run, when it was measured: why L went where it went.
    private IReadOnlyList<DecisionJson>? Decisions(RebuildMode mode) =>
        Summary(mode) is { } summary
            ? [.. summary.MedianRun.Decisions.Select(d => new DecisionJson(d.Elapsed.TotalSeconds, d.ConcurrencyLimit, d.Kind, d.Reason))]
            : null;

    // The JSON file's shape; property names are camelCase.
    // Error is null when the runs were made; otherwise it says why not, and everything after it is null.
    // ReplacedDocuments: lines whose id an earlier line already had (the later document replaced it).
    private sealed record MeasureJson(
        DateTimeOffset WrittenAt,
        MachineJson Machine,
        SettingsJson Settings,
        InputJson Input,
        string? Error,
        long? ReplacedDocuments,
        IReadOnlyList<CollectionJson>? Collections,
        long? DocumentsWithoutCollection,
        string? Collection,
        SizeProfileJson? SizeProfile,
        string? DefinitionSource,
        JsonNode? Definition,
        RebuildMode? Bound,
        double? ReadOnlyToBestFixed,
        double? IndexOnlyToLuceneOnly,
        double? ReadOnlySecondsTo80PercentOfFinalRate,
        IReadOnlyList<DecisionJson>? AdaptiveDecisions,
        IReadOnlyList<DecisionJson>? ReadOnlyDecisions,
        IReadOnlyList<ModeJson>? Results);

    private sealed record DecisionJson(double ElapsedSeconds, int ConcurrencyLimit, string Kind, string Reason);

    private sealed record MachineJson(int ProcessorCount, string Os, string Runtime);

    private sealed record SettingsJson(
        int Repeat, string Device, NetworkDiskJson? NetworkDisk, long TakeMaxBytes, int TakeMaxDocuments, int IndexingThreads, int IndexingThreadNice, long PrefetchBudgetBytes,
        long MaxDocumentBytes, long InMemoryLimitBytes);

    private sealed record NetworkDiskJson(double RequestLatencyMs, double StreamMegabytesPerSecond, int UsefulQueueDepth, double? DeviceMegabytesPerSecond);

    private sealed record InputJson(
        string File, long FileBytes, long Lines, long Stored, long Failed, long StoredBytes, double LoadSeconds,
        IReadOnlyList<LineErrorJson> Errors, long ErrorsNotListed);

    private sealed record LineErrorJson(long Line, string? Id, string Rule, string Message);

    private sealed record CollectionJson(string Name, long Documents, long Bytes);

    private sealed record SizeProfileJson(
        long Count, long TotalBytes, long MinBytes, long P50Bytes, long P90Bytes, long P99Bytes, long MaxBytes, double MeanBytes,
        double PercentileRelativeError, IReadOnlyList<double> DecileMeanBytes, double KeyOrderGrowth);

    private sealed record ModeJson(
        RebuildMode Mode, bool IsBound, int? FixedConcurrency, double WallSeconds, double? RatioToFixedBatch, double? RatioToBound, double DocumentsPerSecond,
        double MegabytesPerSecond, double? IndexerStallPercent, long? PeakInFlightAndBufferedBytes, double? MeanConcurrency,
        long PeakWorkingSetBytes, double? MeanCoresBusy, IReadOnlyList<RunJson> Runs);

    private sealed record RunJson(
        double WallSeconds, double DocumentsPerSecond, double MegabytesPerSecond, double? IndexerStallPercent, long? PeakInFlightAndBufferedBytes,
        double? MeanConcurrency, long PeakWorkingSetBytes, int? IndexOnlyChunks, double? IndexOnlyLoadingSeconds,
        double? SecondsTo80PercentOfFinalRate, int? FixedConcurrency, double? ProcessorSeconds, long? Commits, IReadOnlyList<FixedRunJson>? BestFixedSweep);

    private sealed record FixedRunJson(int Concurrency, double WallSeconds, double MegabytesPerSecond);
}
