using System.Diagnostics;
using System.Globalization;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Measurement;
using Indexing.Prefetcher;
using Indexing.Server.Hosting;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Demo;

/// <summary>
/// The demo's steps, in order: start the server over the data directory (its admin page shows
/// everything below live), make sure the dataset is loaded, prefetch the whole collection into a
/// counting sink while showing the pressure, print the store status and a pressure summary; then
/// define an index over the collection and rebuild it side by side while live traffic runs, report
/// the rebuild, and keep serving until Ctrl+C (unless told to exit when done).
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
        var overrides = new Dictionary<string, string?>
        {
            [ServerOptions.PortSetting] = _settings.Port.ToString(CultureInfo.InvariantCulture),
            [ServerOptions.DirectReadsSetting] = _settings.DirectReads ? "true" : "false",
            [ServerOptions.IndexingThreadsSetting] = _settings.IndexingThreads.ToString(CultureInfo.InvariantCulture),
        };
        ServerHost host;
        try
        {
            host = await ServerHost.StartAsync(_settings.DataDirectory, [], overrides, cancellationToken).ConfigureAwait(false);
        }
        catch (Exception e) when (e is ServerConfigurationException or DocumentStoreException or IOException)
        {
            _console.MarkupLineInterpolated($"[red]error:[/] {e.Message}");
            return 1;
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // Stopped while the server was starting; it closed what it had opened.
            _console.MarkupLine("[yellow]cancelled[/]");
            return 130;
        }

        await using (host.ConfigureAwait(false))
        {
            _console.MarkupLineInterpolated($"Server on [bold]{host.BaseAddress}[/]; watch the prefetch pressure and the rebuild live at [bold link]{host.BaseAddress}admin[/]");
            int result;
            try
            {
                result = await RunStepsAsync(host, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                _console.MarkupLine("[yellow]cancelled[/]");
                return 130;
            }

            if (!_settings.ExitWhenDone)
            {
                _console.MarkupLineInterpolated($"Done. Still serving {host.BaseAddress} (documents, indexes, queries, {host.BaseAddress}admin); Ctrl+C stops.");
                await ServerHost.WaitUntilStoppedAsync(cancellationToken).ConfigureAwait(false);
            }

            return result;
        }
    }

    private async Task<int> RunStepsAsync(ServerHost host, CancellationToken cancellationToken)
    {
        var engine = host.Engine;
        var spec = new DatasetSpec(_settings.Shape, targetTotalBytes: _settings.SizeBytes, seed: _settings.Seed);
        var dataset = new DatasetLoader(_console).EnsureLoaded(engine, _settings.DatasetMarkerPath, spec, cancellationToken);
        var (sink, pressure, elapsed) = await PrefetchAsync(host, dataset.Collection, cancellationToken).ConfigureAwait(false);
        StatusTables.WriteStoreStatus(_console, engine.GetStoreStatus());
        StatusTables.WritePressureSummary(_console, pressure, sink, elapsed);
        if (sink.Duplicates != 0 || sink.EtagsAfterSnapshot != 0)
        {
            return 2;
        }

        if (!_settings.Rebuild)
        {
            return 0;
        }

        var report = await new RebuildStep(_console).RunAsync(engine, dataset.Collection, dataset.Documents, _settings.Writers, cancellationToken).ConfigureAwait(false);
        StatusTables.WriteRebuildReport(_console, report);
        return report.Rebuild.Phase == RebuildPhase.Done && report.Verify.IsConsistent && report.FailedQueries == 0 ? 0 : 3;
    }

    private async Task<(CountingSink Sink, PrefetchPressure Pressure, TimeSpan Elapsed)> PrefetchAsync(
        ServerHost host, string collection, CancellationToken cancellationToken)
    {
        var engine = host.Engine;
        var device = _settings.PrefetchDisk ?? RebuildDevice.Local;
        var sink = new CountingSink();
        var started = Stopwatch.GetTimestamp();
        // Registered with the engine while it runs: the admin page and /metrics show it.
        await using var pass = PrefetchPass.Start(engine, collection, _settings.Strategy, device, "demo prefetch pass", cancellationToken);
        var reads = _settings.DirectReads ? ", direct reads" : "";
        _console.MarkupLineInterpolated(
            $"Prefetching collection [bold]{collection}[/] with [bold]{_settings.Strategy}[/] {pass.ReadsFrom}{reads}; budget {ByteSize.Format(pass.BudgetBytes)}");
        await _console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new DownloadedColumn(), new TransferSpeedColumn(), new RemainingTimeColumn())
            .StartAsync(async context =>
            {
                var task = context.AddTask("prefetch", maxValue: Math.Max(1, engine.GetStoreStatus().EstimatedLiveDataBytes));
                var shown = TimeSpan.MinValue;
                var draining = pass.DrainAsync(sink, cancellationToken);
                // Not the run's token: once cancelled, a cancelled delay would spin this loop until the drain ends.
                while (await Task.WhenAny(draining, Task.Delay(250, CancellationToken.None)).ConfigureAwait(false) != draining)
                {
                    var now = pass.Pressure;
                    task.MaxValue = Math.Max(now.BytesKnown, 1);
                    task.Value = now.BytesDone;
                    task.Description = $"prefetch L={now.ConcurrencyLimit,2} {now.MegabytesPerSecondLastSecond,6:0} MB/s buffered {ByteSize.Format(now.BufferedBytes + now.InFlightBytes),9}";
                    shown = WriteNewDecisions(now, shown);
                }

                WriteNewDecisions(pass.Pressure, shown);

                await draining.ConfigureAwait(false);
                task.MaxValue = Math.Max(sink.Bytes, 1);
                task.Value = sink.Bytes;
            }).ConfigureAwait(false);
        return (sink, pass.Pressure, Stopwatch.GetElapsedTime(started));
    }

    // The controller's decisions kept since the last call (grow, hold, cut, with their reasons),
    // one line each above the progress bar; returns the time of the last one written.
    private TimeSpan WriteNewDecisions(PrefetchPressure pressure, TimeSpan shown)
    {
        if (pressure.RecentDecisions.IsDefaultOrEmpty)
        {
            return shown;
        }

        foreach (var decision in pressure.RecentDecisions.Where(d => d.Elapsed > shown))
        {
            var colour = decision.Kind switch { "grow" => "green", "cut" => "yellow", _ => "grey" };
            _console.MarkupLineInterpolated($"  [grey]{decision.Elapsed.TotalSeconds,5:0.0} s[/]  L={decision.ConcurrencyLimit,-2} [{colour}]{decision.Kind,-5}[/] {decision.Reason}");
            shown = decision.Elapsed;
        }

        return shown;
    }
}
