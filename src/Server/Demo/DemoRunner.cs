using System.Diagnostics;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Demo;

/// <summary>
/// The demo's steps, in order: open the store in the data directory, make sure the dataset is
/// loaded, prefetch the whole collection into a counting sink while showing the pressure live,
/// print the store status and a pressure summary; then define an index over the collection and
/// rebuild it side by side while live traffic runs, and report the rebuild.
/// </summary>
internal sealed class DemoRunner
{
    private readonly DemoSettings _settings;
    private readonly IAnsiConsole _console;

    public DemoRunner(DemoSettings settings, IAnsiConsole? console = null)
    {
        _settings = settings;
        _console = console ?? AnsiConsole.Console;
    }

    public async Task<int> RunAsync(CancellationToken cancellationToken)
    {
        Directory.CreateDirectory(_settings.DataDirectory);
        var storeOptions = new StoreOptions(directReads: _settings.DirectReads);
        DocumentStore store;
        try
        {
            store = DocumentStore.Open(_settings.StoreDirectory, storeOptions);
        }
        catch (DocumentStoreException e)
        {
            _console.MarkupLineInterpolated($"[red]error:[/] {e.Message}");
            return 1;
        }

        using (store)
        {
            try
            {
                var spec = new DatasetSpec(_settings.Shape, targetTotalBytes: _settings.SizeBytes, seed: _settings.Seed);
                var dataset = new DatasetLoader(_console).EnsureLoaded(store, _settings.DatasetMarkerPath, spec, cancellationToken);
                var (sink, pressure, elapsed) = await PrefetchAsync(store, dataset.Collection, cancellationToken).ConfigureAwait(false);
                StatusTables.WriteStoreStatus(_console, store.GetStatus());
                StatusTables.WritePressureSummary(_console, pressure, sink, elapsed);
                if (sink.Duplicates != 0 || sink.EtagsAfterSnapshot != 0)
                {
                    return 2;
                }

                if (!_settings.Rebuild)
                {
                    return 0;
                }

                await using var indexes = IndexManager.Open(_settings.IndexDirectory, store);
                var report = await new RebuildStep(_console).RunAsync(store, indexes, dataset.Collection, dataset.Documents, _settings.Writers, cancellationToken).ConfigureAwait(false);
                StatusTables.WriteRebuildReport(_console, report);
                return report.Rebuild.Phase == RebuildPhase.Done && report.Verify.IsConsistent && report.FailedQueries == 0 ? 0 : 3;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                _console.MarkupLine("[yellow]cancelled[/]");
                return 130;
            }
        }
    }

    private async Task<(CountingSink Sink, PrefetchPressure Pressure, TimeSpan Elapsed)> PrefetchAsync(
        DocumentStore store, string collection, CancellationToken cancellationToken)
    {
        var options = new PrefetchOptions { ForegroundLatency = store.ForegroundReadLatency };
        var model = _settings.ModelNetworkDisk ? new NetworkDiskModel(new NetworkDiskModelOptions()) : null;
        _console.MarkupLineInterpolated(
            $"Prefetching collection [bold]{collection}[/] with [bold]{_settings.Strategy.ToName()}[/]{(model is null ? string.Empty : " through the modelled network disk")}; budget {ByteSize.Format(options.BudgetBytes)}");
        var sink = new CountingSink();
        var started = Stopwatch.GetTimestamp();
        await using var source = Prefetch.Start(store, collection, _settings.Strategy, options, model, cancellationToken: cancellationToken);
        await _console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new DownloadedColumn(), new TransferSpeedColumn(), new RemainingTimeColumn())
            .StartAsync(async context =>
            {
                var task = context.AddTask("prefetch", maxValue: Math.Max(1, store.GetStatus().EstimatedLiveDataBytes));
                var draining = sink.DrainAsync(source, cancellationToken);
                while (await Task.WhenAny(draining, Task.Delay(250, cancellationToken)).ConfigureAwait(false) != draining)
                {
                    var now = source.Pressure;
                    task.MaxValue = Math.Max(now.BytesPlanned, 1);
                    task.Value = now.BytesDone;
                    task.Description = $"prefetch L={now.ConcurrencyLimit,2} {now.MegabytesPerSecondLastSecond,6:0} MB/s buffered {ByteSize.Format(now.BufferedBytes + now.InFlightBytes),9}";
                }

                await draining.ConfigureAwait(false);
                task.MaxValue = Math.Max(sink.Bytes, 1);
                task.Value = sink.Bytes;
            }).ConfigureAwait(false);
        return (sink, source.Pressure, Stopwatch.GetElapsedTime(started));
    }
}
