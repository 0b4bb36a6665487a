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

namespace Indexing.Server.Measure;

/// <summary>
/// The comparison: a console table (medians, ratios to FixedBatch and to the bound), the JSON file
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
        var bound = summaries.Where(s => s.IsBound).MaxBy(s => s.WallSeconds)!;
        var adaptive = summaries.Single(s => s.Mode == RebuildMode.Adaptive);
        console.MarkupLineInterpolated(
            $"Bound: [bold]{bound.Mode}[/] ({bound.WallSeconds:0.00} s) — {(bound.Mode == RebuildMode.IndexOnly ? "indexing" : "reading")} is the slower half on this data and device. Adaptive took {adaptive.RatioToBound:0.00}x the bound and {adaptive.RatioToFixedBatch:0.00}x FixedBatch.");

        WriteJson(settings.JsonFile, ToJson());
        console.MarkupLineInterpolated($"Results written to [bold]{settings.JsonFile}[/]");
        if (settings.TimelineFile is { } csv)
        {
            var run = adaptive.MedianRun;
            var svg = TimelineSvgPath(csv);
            AtomicFile.ReplaceByPath(csv, temp => RebuildTimelineFiles.WriteCsv(temp, run.Timeline));
            AtomicFile.ReplaceByPath(svg, temp => RebuildTimelineFiles.WriteSvg(temp,
                $"Adaptive rebuild of {collection.Name} from {Path.GetFileName(settings.InputFile)} on {settings.Device.Name}: " +
                $"{run.Elapsed.TotalSeconds:0.0} s, median of {adaptive.Runs.Count}", run.Timeline));
            console.MarkupLineInterpolated($"Timeline of the median adaptive run: [bold]{csv}[/] and [bold]{svg}[/]");
        }
    }

    /// <summary>The JSON file when nothing could be measured: the settings, the load and its bad lines, and why.</summary>
    public static void WriteUnmeasured(MeasureSettings settings, LoadOutcome load, string reason) =>
        WriteJson(settings.JsonFile, new MeasureJson(
            DateTimeOffset.UtcNow, Machine(), Settings(settings), Input(settings, load), reason,
            null, null, null, null, null, null, null, null, null, null));

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
            .AddColumns("run", "wall s", "x FixedBatch", "x bound", "docs/s", "MB/s", "stall", "peak held", "mean L", "wall range s")
            .Caption("x bound: wall time over max(ReadOnly, IndexOnly). stall: time the indexer waited for documents. " +
                "peak held: most bytes in flight + buffered. mean L: mean read concurrency. Bounds in grey.");
        foreach (var column in table.Columns.Skip(1))
        {
            column.RightAligned();
        }

        foreach (var s in summaries)
        {
            table.AddRow(
                s.IsBound ? $"[grey]{s.Mode}[/]" : $"[bold]{s.Mode}[/]",
                $"{s.WallSeconds:0.00}",
                $"{s.RatioToFixedBatch:0.00}",
                $"{s.RatioToBound:0.00}",
                $"{s.DocumentsPerSecond:N0}",
                $"{s.MegabytesPerSecond:0.0}",
                s.IndexerStallPercent is { } stall ? $"{stall:0.0}%" : "-",
                s.PeakInFlightAndBufferedBytes is { } peak ? ByteSize.Format(peak) : "-",
                s.MeanConcurrency is { } mean ? $"{mean:0.0}" : "-",
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
            summaries.Where(s => s.IsBound).MaxBy(s => s.WallSeconds)!.Mode,
            [.. summaries.Single(s => s.Mode == RebuildMode.Adaptive).MedianRun.Decisions
                .Select(d => new DecisionJson(d.Elapsed.TotalSeconds, d.ConcurrencyLimit, d.Kind, d.Reason))],
            [.. summaries.Select(s => new ModeJson(
                s.Mode,
                s.IsBound,
                s.WallSeconds,
                s.RatioToFixedBatch,
                s.RatioToBound,
                s.DocumentsPerSecond,
                s.MegabytesPerSecond,
                s.IndexerStallPercent,
                s.PeakInFlightAndBufferedBytes,
                s.MeanConcurrency,
                s.PeakWorkingSetBytes,
                [.. s.Runs.Select(r => new RunJson(
                    r.Elapsed.TotalSeconds, r.DocumentsPerSecond, r.MegabytesPerSecond, r.IndexerStallPercent, r.PeakInFlightAndBufferedBytes,
                    r.MeanConcurrency, r.PeakWorkingSetBytes, r.IndexOnlyChunks, r.IndexOnlyLoadingTime?.TotalSeconds))]))]);
    }

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
        IReadOnlyList<DecisionJson>? AdaptiveDecisions,
        IReadOnlyList<ModeJson>? Results);

    // The controller's recent decisions in the median adaptive run: why L went where it went.
    private sealed record DecisionJson(double ElapsedSeconds, int ConcurrencyLimit, string Kind, string Reason);

    private sealed record MachineJson(int ProcessorCount, string Os, string Runtime);

    private sealed record SettingsJson(
        int Repeat, string Device, NetworkDiskJson? NetworkDisk, long TakeMaxBytes, int TakeMaxDocuments, long PrefetchBudgetBytes,
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
        RebuildMode Mode, bool IsBound, double WallSeconds, double RatioToFixedBatch, double RatioToBound, double DocumentsPerSecond,
        double MegabytesPerSecond, double? IndexerStallPercent, long? PeakInFlightAndBufferedBytes, double? MeanConcurrency,
        long PeakWorkingSetBytes, IReadOnlyList<RunJson> Runs);

    private sealed record RunJson(
        double WallSeconds, double DocumentsPerSecond, double MegabytesPerSecond, double? IndexerStallPercent, long? PeakInFlightAndBufferedBytes,
        double? MeanConcurrency, long PeakWorkingSetBytes, int? IndexOnlyChunks, double? IndexOnlyLoadingSeconds);
}
