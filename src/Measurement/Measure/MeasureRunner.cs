using System.IO.Pipelines;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Measurement.Measure;

/// <summary>
/// The <c>measure</c> command's steps: load the NDJSON file into a fresh store (streamed; bad lines
/// reported and skipped), reopen it with direct reads, pick the collection, profile its sizes, take
/// the definition (the file's, or every string field as text), then run each strategy and bound
/// <see cref="MeasureSettings.Repeat"/> times, round robin (each repeat starting one mode later) so a noisy minute hurts every mode alike,
/// and report medians on the console and in the JSON file (MeasureReport.cs).
/// </summary>
public sealed partial class MeasureRunner
{
    /// <summary>The default definition's index name.</summary>
    public const string DefaultIndexName = "measure-default";

    // How the loading message names the size limit: this command's option.
    private const string MaxDocumentSizeOption = "--max-document-size";

    private const int ListedLoadErrors = 20;

    // Longest wait for the compactions a load leaves behind before the runs start anyway.
    private static readonly TimeSpan SettleTimeout = TimeSpan.FromMinutes(5);

    private readonly MeasureSettings _settings;
    private readonly MeasureLoader _loader;
    private readonly IAnsiConsole _console;

    /// <param name="loader">Reads the input file into the work directory's fresh store (the host's NDJSON loader).</param>
    public MeasureRunner(MeasureSettings settings, MeasureLoader loader, IAnsiConsole? console = null)
    {
        _settings = settings;
        _loader = loader;
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

    /// <summary>0 when the comparison was written; 1 when there was nothing to measure or an input was refused; 130 when cancelled.</summary>
    public async Task<int> RunAsync(CancellationToken cancellationToken)
    {
        IndexDefinition? fileDefinition;
        MeasureWorkDirectory work;
        try
        {
            // All checked before any work, so a bad definition or output path fails in a second, not after the runs.
            fileDefinition = _settings.DefinitionFile is { } definitionPath ? IndexDefinition.Parse(File.ReadAllBytes(definitionPath)) : null;
            CheckOutputs();
            work = MeasureWorkDirectory.Claim(_settings.WorkDirectory, NamedFiles());
        }
        catch (Exception e) when (e is IndexDefinitionException or IOException or UnauthorizedAccessException or MeasureException)
        {
            _console.MarkupLineInterpolated($"[red]error:[/] {Describe(e)}");
            return 1;
        }

        var loaded = false;
        try
        {
            var load = await LoadAsync(work, cancellationToken).ConfigureAwait(false);
            loaded = true;
            return await MeasureAsync(work, load, fileDefinition, cancellationToken).ConfigureAwait(false);
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
            Release(work, loaded);
        }
    }

    private async Task<int> MeasureAsync(MeasureWorkDirectory work, LoadOutcome load, IndexDefinition? fileDefinition, CancellationToken cancellationToken)
    {
        ReportLoad(load);

        // Reopened as the benchmarks do: closing flushed the memtables, and direct reads make the
        // rebuilds read the SST files from the disk instead of memtables or the page cache.
        using var store = OpenForReading(work);
        CollectionCensus collections;
        CollectionCount collection;
        try
        {
            if (load.Result.Stored == 0)
            {
                throw new MeasureException(load.Result.Failed > 0
                    ? $"no line of {_settings.InputFile} could be loaded ({load.Result.Failed:N0} bad lines of {load.Result.Lines:N0}), so there is nothing to measure."
                    : $"{_settings.InputFile} has no records ({load.Result.Lines:N0} lines, none with a document), so there is nothing to measure.");
            }

            collections = CollectionCensus.Take(store, cancellationToken);
            ReportReplaced(load, collections);
            collection = ChooseCollection(collections, fileDefinition);
        }
        catch (MeasureException e)
        {
            // The load's report (its bad lines above all) is still worth having.
            MeasureReport.WriteUnmeasured(_settings, load, e.Message);
            throw;
        }

        var profile = ProfileSizes(store, collection.Name, cancellationToken);
        ReportCollection(collections, collection, profile);

        var (definition, survey) = fileDefinition is not null
            ? (fileDefinition, null)
            : await SurveyAsync(store, collection, cancellationToken).ConfigureAwait(false);
        ReportDefinition(definition, survey);

        var workload = new RebuildWorkload(store, definition, work.IndexesPath, IndexOptionsOf(_settings)) { InMemoryLimitBytes = _settings.InMemoryLimitBytes };
        await SettleAsync(store, cancellationToken).ConfigureAwait(false);
        var runs = await RunAllAsync(workload, cancellationToken).ConfigureAwait(false);
        var summaries = MeasureResults.Summarise(runs, _settings.Modes);
        var report = new MeasureReport(_settings, load, collections, collection, profile, definition, survey, workload, summaries);
        report.Write(_console);
        return 0;
    }

    // The files the run reads and writes, by the option naming them: none may be in the work directory.
    private IEnumerable<(string Option, string Path)> NamedFiles()
    {
        yield return ("FILE", _settings.InputFile);
        yield return ("--json", _settings.JsonFile);
        if (_settings.DefinitionFile is { } definition)
        {
            yield return ("--definition", definition);
        }

        if (_settings.TimelineFile is { } timeline)
        {
            yield return ("--timeline", timeline);
            yield return ("--timeline's plot", MeasureReport.TimelineSvgPath(timeline));
        }
    }

    private void CheckOutputs()
    {
        var files = NamedFiles().ToList();
        foreach (var (option, path) in files)
        {
            var same = files.FirstOrDefault(f => f.Option != option && string.Equals(Path.GetFullPath(f.Path), Path.GetFullPath(path), StringComparison.Ordinal));
            if (same.Option is not null)
            {
                throw new MeasureException($"{option} and {same.Option} are the same file, {path}; name different files.");
            }
        }

        foreach (var (option, path) in files.Where(f => f.Option is "--json" or "--timeline" or "--timeline's plot"))
        {
            try
            {
                CheckWritable(path);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                throw new MeasureException($"{option} {path} cannot be written: {e.Message}");
            }
        }
    }

    // The output's directory exists (created if missing), the path is not a directory, and the
    // temporary file its atomic replacement writes first can be created.
    private static void CheckWritable(string path)
    {
        if (Directory.Exists(path))
        {
            throw new IOException($"{path} is a directory; name a file.");
        }

        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(path))!);
        var temp = AtomicFile.TempPath(path);
        using (new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
        }

        File.Delete(temp);
    }

    private void Release(MeasureWorkDirectory work, bool loaded)
    {
        try
        {
            if (work.Release(_settings.KeepStore && loaded))
            {
                _console.MarkupLineInterpolated($"[grey]The loaded store is kept in {work.StorePath} (--keep-store).[/]");
            }
            else if (_settings.KeepStore)
            {
                _console.MarkupLine("[yellow]The store was not kept[/]: its load did not complete.");
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            _console.MarkupLineInterpolated($"[yellow]warning:[/] could not clear the work directory {work.Path}: {e.Message}");
        }
        finally
        {
            work.Dispose();
        }
    }

    private async Task<LoadOutcome> LoadAsync(MeasureWorkDirectory work, CancellationToken cancellationToken)
    {
        var length = new FileInfo(_settings.InputFile).Length;
        _console.MarkupLineInterpolated($"Loading [bold]{_settings.InputFile}[/] ({ByteSize.Format(length)}) into a fresh store in {work.StorePath}");
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        var result = await _loader(new MeasureLoadRequest(_settings.InputFile, length, work.Path, _settings.MaxDocumentBytes, MaxDocumentSizeOption, _console), cancellationToken).ConfigureAwait(false);

        // The loader's engine leaves an empty index catalog beside the store: the runs build their indexes there afresh.
        if (Directory.Exists(work.IndexesPath))
        {
            Directory.Delete(work.IndexesPath, recursive: true);
        }

        return new LoadOutcome(_settings.InputFile, length, result, System.Diagnostics.Stopwatch.GetElapsedTime(started));
    }

    // The load leaves compactions behind: their reads would fall on the first run, so the runs start after them.
    private async Task SettleAsync(DocumentStore store, CancellationToken cancellationToken)
    {
        var started = System.Diagnostics.Stopwatch.GetTimestamp();
        var settled = await store.WaitForCompactionsAsync(SettleTimeout, cancellationToken).ConfigureAwait(false);
        var waited = System.Diagnostics.Stopwatch.GetElapsedTime(started);
        if (settled)
        {
            _console.MarkupLineInterpolated($"[grey]RocksDB's compactions after the load: done in {waited.TotalSeconds:0.0} s[/]");
        }
        else
        {
            _console.MarkupLineInterpolated($"[yellow]RocksDB still compacting after {waited.TotalSeconds:0} s: the first runs share the disk with it[/]");
        }
    }

    private DocumentStore OpenForReading(MeasureWorkDirectory work)
    {
        var options = new StoreOptions(_settings.MaxDocumentBytes, syncWrites: false, blockCacheBytes: 8 << 20, directReads: true);
        try
        {
            return DocumentStore.Open(work.StorePath, options);
        }
        catch (DocumentStoreException e)
        {
            throw new MeasureException(
                $"the store in {work.StorePath} could not be opened with direct reads, which the measurements need so that the page cache does not hide " +
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
        await _console.Status().StartAsync($"Finding the string fields of {Markup.Escape(collection.Name)} for the default definition", async _ =>
        {
            await using var source = Prefetch.Start(store, collection.Name, PrefetchStrategy.Sequential, cancellationToken: cancellationToken);
            while (await source.TakeAsync(RebuildWorkload.SmallTakes.TakeMaxDocuments, RebuildWorkload.SmallTakes.TakeMaxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
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
        // Also counts the collection, which every run's figures are checked against.
        await _console.Status().StartAsync("Preparing the IndexOnly bound's input (held in memory up to --in-memory-limit, else in chunks)",
            _ => workload.LoadIntoMemoryAsync(cancellationToken)).ConfigureAwait(false);
        var modes = _settings.Modes;
        var runs = modes.ToDictionary(m => m, _ => new List<RebuildFigures>());
        var total = _settings.Repeat * modes.Count;
        var done = 0;
        var indexing = IndexOptionsOf(_settings);
        _console.MarkupLineInterpolated(
            $"Measuring on [bold]{_settings.Device}[/]: {total} runs ({modes.Count} modes x {_settings.Repeat}), round robin; {indexing.IndexingThreads} indexing thread(s) at nice {indexing.IndexingThreadNice}");
        if (ThreadNice.CurrentThreadNice() is null)
        {
            _console.MarkupLineInterpolated($"[yellow]note:[/] {ThreadNice.UnsupportedReason}");
        }

        if (workload.Bytes <= WarmUpLimitBytes)
        {
            // A rebuild when one is measured, else reading alone (JIT and start-up either way).
            var warmUpMode = modes.Contains(RebuildMode.Adaptive) || !modes.Contains(RebuildMode.ReadOnly) ? RebuildMode.Adaptive : RebuildMode.ReadOnly;
            var warmUp = await RunOneAsync(workload, warmUpMode, "warm-up run (not counted)", cancellationToken).ConfigureAwait(false);
            _console.MarkupLineInterpolated($"  [grey]warm-up  {warmUpMode,-10} {warmUp.Elapsed.TotalSeconds,8:0.00} s (not counted: JIT and start-up)[/]");
        }

        for (var repeat = 0; repeat < _settings.Repeat; repeat++)
        {
            // Each repeat starts one mode later, so no mode always follows the same one.
            foreach (var mode in modes.Skip(repeat % modes.Count).Concat(modes.Take(repeat % modes.Count)))
            {
                done++;
                var figures = await RunOneAsync(workload, mode, $"run {done}/{total}: {mode}", cancellationToken).ConfigureAwait(false);
                runs[mode].Add(figures);
                var fixedL = figures.FixedConcurrency is { } l ? $"  at L={l} (of {string.Join(", ", figures.BestFixedSweep.Select(r => $"{r.Concurrency}: {r.MegabytesPerSecond:0}"))} MB/s)" : "";
                _console.MarkupLineInterpolated(
                    $"  [grey]{done,3}/{total}[/] {mode,-10} {figures.Elapsed.TotalSeconds,8:0.00} s  {figures.MegabytesPerSecond,8:0.0} MB/s{(figures.IndexerStallPercent is { } stall ? $"  stall {stall:0.0}%" : "")}{fixedL}");
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

    /// <summary>The indexer's options of every measured run: small takes (see <see cref="RebuildWorkload.SmallTakes"/>) and the threads asked for.</summary>
    internal static IndexOptions IndexOptionsOf(MeasureSettings settings) => RebuildWorkload.SmallTakes with { IndexingThreads = settings.IndexingThreads };

    private static string Describe(Exception e) => e switch
    {
        IndexDefinitionException definition => $"the index definition is refused: {string.Join("; ", definition.Problems)}",
        _ => e.Message,
    };
}

/// <summary>A problem with the measure command's input or work directory, said for the user.</summary>
internal sealed class MeasureException(string message) : Exception(message);

/// <summary>What loading the file did.</summary>
internal sealed record LoadOutcome(string File, long FileBytes, MeasureLoadResult Result, TimeSpan Elapsed);

/// <summary>
/// Reads the measure command's input file into a fresh store: an engine opened on
/// <see cref="MeasureLoadRequest.DataDirectory"/> (its store is the work directory's <c>store</c>), with unsynced
/// writes and the command's size limit. The host supplies it: the NDJSON line format is the server's.
/// </summary>
public delegate Task<MeasureLoadResult> MeasureLoader(MeasureLoadRequest request, CancellationToken cancellationToken);

/// <summary>What the loader is asked: the file, the engine's data directory, the size limit and how the user raises it, and the console to show progress on.</summary>
public sealed record MeasureLoadRequest(string InputFile, long FileBytes, string DataDirectory, long MaxDocumentBytes, string LimitSetting, IAnsiConsole Console);

/// <summary>What the load did: lines read, documents stored, bad lines (the first ones listed) and body bytes stored.</summary>
public sealed record MeasureLoadResult(long Lines, long Stored, long Failed, long Bytes, IReadOnlyList<MeasureLineError> Errors, long ErrorsNotListed);

/// <summary>One bad line of the input: its number, its id when it had one, the rule it broke and the message.</summary>
public sealed record MeasureLineError(long Line, string? Id, string Rule, string Message);
