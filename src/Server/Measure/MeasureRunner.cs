using System.IO.Pipelines;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Measurement;
using Indexing.Prefetcher;
using Indexing.Server.Loading;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Measure;

/// <summary>
/// The <c>measure</c> command's steps: load the NDJSON file into a fresh store (streamed; bad lines
/// reported and skipped), reopen it with direct reads, pick the collection, profile its sizes, take
/// the definition (the file's, or every string field as text), then run each strategy and bound
/// <see cref="MeasureSettings.Repeat"/> times, round robin so a noisy minute hurts every mode alike,
/// and report medians on the console and in the JSON file (MeasureReport.cs).
/// </summary>
internal sealed partial class MeasureRunner
{
    /// <summary>A file only this command writes: a work directory holding it may be emptied.</summary>
    public const string WorkMarkerName = ".indexing-measure";

    /// <summary>The default definition's index name.</summary>
    public const string DefaultIndexName = "measure-default";

    // How the loading message names the size limit: this command's option.
    private const string MaxDocumentSizeOption = "--max-document-size";

    private const int ListedLoadErrors = 20;

    private readonly MeasureSettings _settings;
    private readonly IAnsiConsole _console;

    public MeasureRunner(MeasureSettings settings, IAnsiConsole? console = null)
    {
        _settings = settings;
        _console = console ?? AnsiConsole.Console;
        if (console is null && Console.IsOutputRedirected)
        {
            // Into a file or a pipe the console has no width of its own; 80 columns would fold the results table.
            _console.Profile.Width = 160;
        }
    }

    /// <summary>
    /// Collections up to this size get one Adaptive run first that is not counted: the first rebuild in
    /// a process also pays JIT compilation and Lucene's start-up (seconds here), which on a small
    /// collection would be a large part of whichever run came first. On larger ones it is noise next
    /// to a run, and a whole extra rebuild would cost minutes.
    /// </summary>
    public const long WarmUpLimitBytes = 256L << 20;

    private string StorePath => Path.Combine(_settings.WorkDirectory, "store");

    private string IndexesPath => Path.Combine(_settings.WorkDirectory, "indexes");

    /// <summary>0 when the comparison was written; 1 when there was nothing to measure or an input was refused; 130 when cancelled.</summary>
    public async Task<int> RunAsync(CancellationToken cancellationToken)
    {
        IndexDefinition? fileDefinition = null;
        try
        {
            // Read before any work, so a bad definition fails in a second, not after the load.
            fileDefinition = _settings.DefinitionFile is { } definitionPath ? IndexDefinition.Parse(File.ReadAllBytes(definitionPath)) : null;
            PrepareWorkDirectory();
        }
        catch (Exception e) when (e is IndexDefinitionException or IOException or UnauthorizedAccessException or MeasureException)
        {
            _console.MarkupLineInterpolated($"[red]error:[/] {Describe(e)}");
            return 1;
        }

        try
        {
            return await MeasureAsync(fileDefinition, cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            _console.MarkupLine("[yellow]cancelled[/]: no results written.");
            return 130;
        }
        catch (Exception e) when (e is IndexDefinitionException or MeasureException or DocumentStoreException or IOException or UnauthorizedAccessException)
        {
            _console.MarkupLineInterpolated($"[red]error:[/] {Describe(e)}");
            return 1;
        }
        finally
        {
            CleanUpWorkDirectory();
        }
    }

    private async Task<int> MeasureAsync(IndexDefinition? fileDefinition, CancellationToken cancellationToken)
    {
        var load = await LoadAsync(cancellationToken).ConfigureAwait(false);
        ReportLoad(load);
        if (load.Result.Stored == 0)
        {
            throw new MeasureException($"no document of {_settings.InputFile} could be loaded ({load.Result.Failed:N0} bad lines of {load.Result.Lines:N0}), so there is nothing to measure.");
        }

        // Reopened as the benchmarks do: closing flushed the memtables, and direct reads make the
        // rebuilds read the SST files from the disk instead of memtables or the page cache.
        using var store = OpenForReading();
        var collections = CollectionCensus.Take(store, cancellationToken);
        var collection = ChooseCollection(collections, fileDefinition);
        var profile = ProfileSizes(store, collection.Name, cancellationToken);
        ReportCollection(collections, collection, profile);

        var (definition, survey) = fileDefinition is not null
            ? (fileDefinition, null)
            : await SurveyAsync(store, collection, cancellationToken).ConfigureAwait(false);
        ReportDefinition(definition, survey);

        var workload = new RebuildWorkload(store, definition, IndexesPath, TakeSmall) { InMemoryLimitBytes = _settings.InMemoryLimitBytes };
        var runs = await RunAllAsync(workload, cancellationToken).ConfigureAwait(false);
        var summaries = MeasureResults.Summarise(runs);
        var report = new MeasureReport(_settings, load, collections, collection, profile, definition, survey, workload, summaries);
        report.Write(_console);
        return 0;
    }

    /// <summary>
    /// The indexer's takes: at most 1 MiB / 256 documents, as in the rebuild benchmarks. With the
    /// default 16 MiB takes, the indexer's queue holds up to 64 MiB ahead of indexing, which is the
    /// whole of a small file: every strategy would hand everything out in a second and the rest of
    /// the run would index from that queue. Small takes make a file of tens of MB behave like the
    /// steady state of a large rebuild.
    /// </summary>
    public static IndexOptions TakeSmall { get; } = new() { TakeMaxBytes = 1L << 20, TakeMaxDocuments = 256 };

    private void PrepareWorkDirectory()
    {
        var work = _settings.WorkDirectory;
        var marker = Path.Combine(work, WorkMarkerName);
        if (Directory.Exists(work) && Directory.EnumerateFileSystemEntries(work).Any())
        {
            if (!File.Exists(marker))
            {
                throw new MeasureException(
                    $"work directory {work} is not empty and was not made by measure (it has no {WorkMarkerName} file), so it is left alone; " +
                    "name an empty or new directory with --work.");
            }

            // Ours, from an earlier run (kept with --keep-store, or interrupted): start fresh.
            DeleteIfPresent(StorePath);
            DeleteIfPresent(IndexesPath);
        }

        Directory.CreateDirectory(work);
        File.WriteAllText(marker, "Work directory of `indexing measure`: the store and indexes here are deleted by the next run.\n");
    }

    private void CleanUpWorkDirectory()
    {
        try
        {
            DeleteIfPresent(IndexesPath);
            if (_settings.KeepStore)
            {
                if (Directory.Exists(StorePath))
                {
                    _console.MarkupLineInterpolated($"[grey]The loaded store is kept in {StorePath} (--keep-store).[/]");
                }
            }
            else if (File.Exists(Path.Combine(_settings.WorkDirectory, WorkMarkerName)))
            {
                Directory.Delete(_settings.WorkDirectory, recursive: true);
            }
        }
        catch (IOException e)
        {
            _console.MarkupLineInterpolated($"[yellow]warning:[/] could not remove the work directory {_settings.WorkDirectory}: {e.Message}");
        }
    }

    private static void DeleteIfPresent(string directory)
    {
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    private async Task<LoadOutcome> LoadAsync(CancellationToken cancellationToken)
    {
        var length = new FileInfo(_settings.InputFile).Length;
        _console.MarkupLineInterpolated($"Loading [bold]{_settings.InputFile}[/] ({ByteSize.Format(length)}) into a fresh store in {StorePath}");
        var progress = new BulkLoadProgress();
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        BulkResult? result = null;

        // Buffered writes: the store is this command's scratch copy, rebuilt from the file if lost.
        using (var store = DocumentStore.Open(StorePath, new StoreOptions(_settings.MaxDocumentBytes, syncWrites: false)))
        {
            var file = new FileStream(_settings.InputFile, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16, FileOptions.SequentialScan | FileOptions.Asynchronous);
            await using (file.ConfigureAwait(false))
            {
                var reader = PipeReader.Create(file, new StreamPipeReaderOptions(bufferSize: 1 << 20));
                // Its own thread: the loader writes to RocksDB synchronously between reads.
                var loading = Task.Run(() => BulkLoad.LoadAsync(reader, store, MaxDocumentSizeOption, progress, cancellationToken), cancellationToken);
                await _console.Progress()
                    .AutoClear(false)
                    .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new DownloadedColumn(), new TransferSpeedColumn(), new RemainingTimeColumn())
                    .StartAsync(async context =>
                    {
                        var task = context.AddTask("load", maxValue: Math.Max(1, length));
                        while (!loading.IsCompleted)
                        {
                            task.Value = progress.Bytes;
                            task.Description = $"load: {progress.StoredDocuments:N0} stored, {progress.FailedLines:N0} bad";
                            await Task.WhenAny(loading, Task.Delay(200, cancellationToken)).ConfigureAwait(false);
                        }

                        task.Value = task.MaxValue;
                        task.Description = $"load: {progress.StoredDocuments:N0} stored, {progress.FailedLines:N0} bad";
                    }).ConfigureAwait(false);
                result = await loading.ConfigureAwait(false);
                await reader.CompleteAsync().ConfigureAwait(false);
            }
        }

        return new LoadOutcome(_settings.InputFile, length, result, System.Diagnostics.Stopwatch.GetElapsedTime(started));
    }

    private DocumentStore OpenForReading()
    {
        var options = new StoreOptions(_settings.MaxDocumentBytes, syncWrites: false, blockCacheBytes: 8 << 20, directReads: true);
        try
        {
            return DocumentStore.Open(StorePath, options);
        }
        catch (DocumentStoreException e)
        {
            throw new MeasureException(
                $"the store in {StorePath} could not be opened with direct reads, which the measurements need so that the page cache does not hide " +
                $"the disk ({e.Message}). Some file systems (tmpfs) do not support direct I/O: put --work on a disk-backed file system.");
        }
    }

    private CollectionCount ChooseCollection(CollectionCensus census, IndexDefinition? fileDefinition)
    {
        var wanted = _settings.Collection ?? fileDefinition?.Collection;
        if (fileDefinition is not null && _settings.Collection is { } asked && asked != fileDefinition.Collection)
        {
            throw new MeasureException(
                $"--collection is {MessageText.Quote(asked)} but the definition in {_settings.DefinitionFile} covers collection " +
                $"{MessageText.Quote(fileDefinition.Collection)}; leave --collection out, or use a definition for that collection.");
        }

        if (wanted is null)
        {
            return census.Largest ?? throw new MeasureException(
                $"none of the {census.Documents:N0} documents loaded belongs to a collection (an id's collection is the part before its first '/', " +
                "as in 'orders/17'), and an index covers one collection; give the documents ids like 'collection/key'.");
        }

        return census.Find(wanted) ?? throw new MeasureException(
            $"collection {MessageText.Quote(wanted)} has no document in {_settings.InputFile}; it has {census.Describe()}.");
    }

    private SizeProfile ProfileSizes(DocumentStore store, string collection, CancellationToken cancellationToken)
    {
        var profiler = new SizeProfiler();
        foreach (var document in store.ScanMetadata(collection))
        {
            cancellationToken.ThrowIfCancellationRequested();
            profiler.Add(document.SizeBytes);
        }

        return profiler.ToProfile();
    }

    // One sequential read of the collection, every body surveyed for string paths (bounded memory:
    // the prefetcher's budget, and the survey's path cap).
    private async Task<(IndexDefinition Definition, StringFieldSurvey Survey)> SurveyAsync(
        DocumentStore store, CollectionCount collection, CancellationToken cancellationToken)
    {
        var survey = new StringFieldSurvey();
        await _console.Status().StartAsync($"Finding the string fields of {collection.Name} for the default definition", async _ =>
        {
            await using var source = Prefetch.Start(store, collection.Name, PrefetchStrategy.Sequential, cancellationToken: cancellationToken);
            while (await source.TakeAsync(TakeSmall.TakeMaxDocuments, TakeSmall.TakeMaxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
            {
                foreach (var document in batch.Documents)
                {
                    survey.Add(document.Body.Span);
                }
            }
        }).ConfigureAwait(false);
        return (survey.ToDefinition(DefaultIndexName, collection.Name), survey);
    }

    // Round robin: repeat r runs every mode once before repeat r + 1 starts.
    private async Task<Dictionary<RebuildMode, List<RebuildFigures>>> RunAllAsync(RebuildWorkload workload, CancellationToken cancellationToken)
    {
        await _console.Status().StartAsync("Preparing the IndexOnly bound's input (held in memory up to --in-memory-limit, else in chunks)",
            _ => workload.LoadIntoMemoryAsync(cancellationToken)).ConfigureAwait(false);
        var runs = MeasureResults.Modes.ToDictionary(m => m, _ => new List<RebuildFigures>());
        var total = _settings.Repeat * MeasureResults.Modes.Count;
        var done = 0;
        _console.MarkupLineInterpolated($"Measuring on [bold]{_settings.Device}[/]: {total} runs ({MeasureResults.Modes.Count} modes x {_settings.Repeat}), round robin");
        if (workload.Bytes <= WarmUpLimitBytes)
        {
            var warmUp = await RunOneAsync(workload, RebuildMode.Adaptive, "warm-up run (not counted)", cancellationToken).ConfigureAwait(false);
            _console.MarkupLineInterpolated($"  [grey]warm-up  Adaptive   {warmUp.Elapsed.TotalSeconds,8:0.00} s (not counted: JIT and Lucene start-up)[/]");
        }

        for (var repeat = 1; repeat <= _settings.Repeat; repeat++)
        {
            foreach (var mode in MeasureResults.Modes)
            {
                done++;
                var figures = await RunOneAsync(workload, mode, $"run {done}/{total}: {mode}", cancellationToken).ConfigureAwait(false);
                runs[mode].Add(figures);
                _console.MarkupLineInterpolated(
                    $"  [grey]{done,3}/{total}[/] {mode,-10} {figures.Elapsed.TotalSeconds,8:0.00} s  {figures.MegabytesPerSecond,8:0.0} MB/s{(figures.IndexerStallPercent is { } stall ? $"  stall {stall:0.0}%" : "")}");
            }
        }

        return runs;
    }

    // A spinner while a run goes when someone watches; in a log, only the line printed after it.
    private async Task<RebuildFigures> RunOneAsync(RebuildWorkload workload, RebuildMode mode, string status, CancellationToken cancellationToken)
    {
        RebuildFigures figures;
        if (_console.Profile.Capabilities.Interactive)
        {
            figures = await _console.Status()
                .StartAsync(status, _ => workload.RunAsync(mode, _settings.Device, cancellationToken: cancellationToken))
                .ConfigureAwait(false);
        }
        else
        {
            figures = await workload.RunAsync(mode, _settings.Device, cancellationToken: cancellationToken).ConfigureAwait(false);
        }

        if (figures.Documents != workload.Documents || figures.Bytes != workload.Bytes)
        {
            throw new MeasureException(
                $"{mode} handed over {figures.Documents:N0} documents ({figures.Bytes:N0} bytes); the collection holds " +
                $"{workload.Documents:N0} ({workload.Bytes:N0} bytes). The measurement is void; this is a defect worth reporting.");
        }

        return figures;
    }

    private static string Describe(Exception e) => e switch
    {
        IndexDefinitionException definition => $"the index definition is refused: {string.Join("; ", definition.Problems)}",
        _ => e.Message,
    };
}

/// <summary>A problem with the measure command's input or work directory, said for the user.</summary>
internal sealed class MeasureException(string message) : Exception(message);

/// <summary>What loading the file did.</summary>
internal sealed record LoadOutcome(string File, long FileBytes, BulkResult Result, TimeSpan Elapsed);
