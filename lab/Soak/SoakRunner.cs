extern alias server;

using System.Globalization;
using Indexing.Datasets;
using Indexing.Indexer;
using server::Indexing.Server.Demo;
using server::Indexing.Server.Hosting;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Lab.Soak;

/// <summary>
/// The scale run, in order: start the server over the data directory (its admin page shows the
/// run live), load the dataset unless it is there, build the index the first time, then rebuild it
/// side by side (always to the demo's wide definition, so runs compare) under the demo's live traffic (<see cref="RebuildStep"/>: two writers, a querier, a
/// foreground reader), keep the traffic on for a while after, and write what the one-second samples
/// showed (<see cref="SoakFiles"/>). The demo's pieces, reused; the run exits when done.
/// </summary>
internal sealed class SoakRunner
{
    private readonly SoakSettings _settings;
    private readonly IAnsiConsole _console;

    public SoakRunner(SoakSettings settings, IAnsiConsole? console = null)
    {
        _settings = settings;
        _console = console ?? AnsiConsole.Console;
    }

    public async Task<int> RunAsync(CancellationToken cancellationToken)
    {
        Directory.CreateDirectory(_settings.DataDirectory);
        var overrides = new Dictionary<string, string?>
        {
            [ServerOptions.PortSetting] = _settings.Port.ToString(CultureInfo.InvariantCulture),
            [ServerOptions.DirectReadsSetting] = _settings.DirectReads ? "true" : "false",
        };
        ServerHost host;
        try
        {
            host = await ServerHost.StartAsync(_settings.DataDirectory, [.. _settings.Configuration], overrides, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is ServerConfigurationException or DocumentStoreException or IOException)
        {
            _console.MarkupLineInterpolated($"[red]error:[/] {e.Message}");
            return 1;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            _console.MarkupLine("[yellow]cancelled[/]");
            return 130;
        }

        await using (host.ConfigureAwait(false))
        {
            _console.MarkupLineInterpolated($"Server on [bold]{host.BaseAddress}[/]; watch memory and the rebuild live at [bold link]{host.BaseAddress}admin[/]");
            _console.MarkupLineInterpolated($"Allocator: [bold]{RocksDbNative.DescribeMalloc()}[/]; RocksDB library {RocksDbNative.LoadedLibraryPath ?? "-"}");
            _console.MarkupLineInterpolated($"Store: {host.Engine.Options.Storage}; memory bound {ByteSize.Format(host.Memory.Bound.TotalBytes)}");
            var recorder = new SoakRecorder(host, RebuildStep.IndexName);
            await using (recorder.ConfigureAwait(false))
            {
                try
                {
                    return await RunStepsAsync(host, recorder, cancellationToken).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
                {
                    _console.MarkupLine("[yellow]cancelled[/]");
                    return 130;
                }
            }
        }
    }

    private async Task<int> RunStepsAsync(ServerHost host, SoakRecorder recorder, CancellationToken cancellationToken)
    {
        var engine = host.Engine;
        var indexes = engine.Indexes;
        var spec = new DatasetSpec(_settings.Shape, targetTotalBytes: _settings.SizeBytes, seed: _settings.Seed);
        var dataset = new DatasetLoader(_console).EnsureLoaded(engine, _settings.DatasetMarkerPath, spec, cancellationToken);

        if (!indexes.Names.Contains(RebuildStep.IndexName))
        {
            recorder.Enter(SoakStage.InitialBuild);
            indexes.CreateOrUpdate(DemoIndexes.Wide(RebuildStep.IndexName, dataset.Collection));
            await WaitForInitialBuildAsync(indexes, cancellationToken).ConfigureAwait(false);
        }

        recorder.Enter(SoakStage.SideBySide);
        // Always to the wide definition (its text field makes indexing the larger half), and the
        // writers leave the dataset's documents alone: every run does the same work, so runs with
        // different allocators or settings compare.
        var rebuild = await new RebuildStep(_console).RunAsync(
            engine, dataset.Collection, dataset.Documents, _settings.Writers, cancellationToken, DemoIndexes.Wide(RebuildStep.IndexName, dataset.Collection),
            keepDataset: true).ConfigureAwait(false);
        StatusTables.WriteRebuildReport(_console, rebuild);

        recorder.Enter(SoakStage.After);
        _console.MarkupLineInterpolated($"Live traffic for {_settings.After.TotalSeconds:0} s after the rebuild");
        var traffic = new LiveTraffic(engine, RebuildStep.IndexName, dataset.Collection, dataset.Documents, _settings.Writers, TimeSpan.FromMilliseconds(5), keepDataset: true);
        await using (traffic.ConfigureAwait(false))
        {
            await Task.Delay(_settings.After, cancellationToken).ConfigureAwait(false);
        }

        var samples = await recorder.StopAsync().ConfigureAwait(false);
        if (recorder.FirstError is { } error)
        {
            _console.MarkupLineInterpolated($"[yellow]warning:[/] a sample failed ({error}); the timeline has a gap there");
        }

        var report = SoakReport.From(_settings, dataset, engine.Options.Storage, host.Memory.Bound, rebuild, samples);
        SoakFiles.Write(_settings, report, samples);
        var growth = report.SecondHalfGrowth is { } g ? string.Create(CultureInfo.InvariantCulture, $"{g * 100:+0.0;-0.0}%") : "-";
        _console.MarkupLineInterpolated(
            $"Peak private memory [bold]{ByteSize.Format(report.Memory.PeakPrivateBytes)}[/] ({report.PeakOverBound:0.00} of the bound {ByteSize.Format(report.Bound.TotalBytes)}), peak RSS {ByteSize.Format(report.Memory.PeakResidentBytes)} (mapped files up to {ByteSize.Format(report.Memory.PeakMappedFileBytes)}), final {ByteSize.Format(report.Memory.FinalResidentBytes)}; private memory growth over the rebuild's second half {growth}; bulk {report.Rebuild.BulkMegabytesPerSecond:0.0} MB/s");
        _console.MarkupLineInterpolated($"Report: [bold]{_settings.FilePath("md")}[/] (and .csv, .svg, .json beside it)");
        return rebuild.Rebuild.Phase == RebuildPhase.Done && rebuild.Verify.IsConsistent && rebuild.FailedQueries == 0 ? 0 : 3;
    }

    private async Task WaitForInitialBuildAsync(IndexManager indexes, CancellationToken cancellationToken)
    {
        await _console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn(), new RemainingTimeColumn())
            .StartAsync(async context =>
            {
                var task = context.AddTask("initial build", maxValue: 1);
                while (indexes.GetRebuild(RebuildStep.IndexName) is { IsFinished: false } progress)
                {
                    task.MaxValue = Math.Max(1, progress.BytesTotal);
                    task.Value = progress.BytesDone;
                    await Task.Delay(500, cancellationToken).ConfigureAwait(false);
                }

                task.Value = task.MaxValue;
            }).ConfigureAwait(false);
    }
}
