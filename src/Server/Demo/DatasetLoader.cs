using System.Text.Json;
using Indexing.Datasets;
using Indexing.Engine;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Demo;

/// <summary>
/// Puts a generated dataset into the store once: a marker file (<c>dataset.json</c>) written
/// atomically after the last batch says the load completed. Without it (first run, or a load that
/// was interrupted) the dataset is generated and loaded again: the generator is deterministic and a
/// put replaces, so a half-finished earlier load is simply overwritten.
/// </summary>
internal sealed class DatasetLoader
{
    private static readonly JsonSerializerOptions _json = new() { WriteIndented = true };

    private readonly IAnsiConsole _console;

    public DatasetLoader(IAnsiConsole console) => _console = console;

    /// <summary>The dataset in the store: loaded now, or found complete from an earlier run.</summary>
    public DatasetMarker EnsureLoaded(IndexingEngine engine, string markerPath, DatasetSpec spec, CancellationToken cancellationToken)
    {
        var storePath = engine.Options.StoreDirectory;
        if (TryReadMarker(markerPath) is { } existing)
        {
            _console.MarkupLineInterpolated(
                $"[grey]Dataset present[/] in {storePath}: {existing.Documents:N0} {existing.Shape} documents, {ByteSize.Format(existing.Bytes)} (seed {existing.Seed}). Delete {markerPath} to generate it again.");
            return existing;
        }

        _console.MarkupLineInterpolated($"Generating and loading [bold]{spec}[/] into {storePath}");
        var target = spec.TargetTotalBytes ?? 0;
        BulkWriteResult? result = null;
        _console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new DownloadedColumn(), new TransferSpeedColumn(), new RemainingTimeColumn())
            .Start(context =>
            {
                var task = context.AddTask("load (PutMany)", maxValue: target);
                var documents = DatasetGenerator.Generate(spec).Select(document =>
                {
                    task.Increment(document.SizeBytes);
                    return new DocumentWrite(document.Id, document.Utf8Json);
                });
                result = engine.PutMany(documents, cancellationToken);
                task.Value = task.MaxValue;
            });

        var marker = new DatasetMarker(spec.Shape.ToName(), spec.Seed, spec.Collection, result!.Documents, result.Bytes, result.Elapsed.TotalSeconds, DateTimeOffset.UtcNow);
        WriteMarker(markerPath, marker);
        _console.MarkupLineInterpolated(
            $"Loaded {result.Documents:N0} documents, {ByteSize.Format(result.Bytes)} in {result.Elapsed.TotalSeconds:0.0} s: [bold]{result.MegabytesPerSecond:0} MB/s[/] through PutMany (etags {result.FirstEtag}..{result.LastEtag}).");
        return marker;
    }

    private static DatasetMarker? TryReadMarker(string path)
    {
        if (!File.Exists(path))
        {
            return null;
        }

        try
        {
            return JsonSerializer.Deserialize<DatasetMarker>(File.ReadAllBytes(path));
        }
        catch (JsonException)
        {
            return null; // an unreadable marker is no marker: load again
        }
    }

    private static void WriteMarker(string path, DatasetMarker marker) =>
        AtomicFile.Replace(path, stream => JsonSerializer.Serialize(stream, marker, _json));
}

/// <summary>What <c>dataset.json</c> records about a completed load.</summary>
internal sealed record DatasetMarker(string Shape, int Seed, string Collection, long Documents, long Bytes, double LoadSeconds, DateTimeOffset LoadedAt);
