using System.IO.Pipelines;
using Indexing.Engine;
using Indexing.Measurement.Measure;
using Indexing.Server.Loading;
using Indexing.Storage;
using Spectre.Console;

namespace Indexing.Server.Measure;

/// <summary>
/// The <c>measure</c> command's load step (<see cref="MeasureLoader"/>): the user's NDJSON file, streamed
/// through the bulk loader of <c>POST /docs/bulk</c> into an engine opened on the work directory with
/// unsynced writes (the store is the command's scratch copy, rebuilt from the file if lost), with a
/// progress bar. Only the engine's public API: the measurement itself (Indexing.Measurement) reopens
/// the store for reading once the engine has closed it.
/// </summary>
internal static class MeasureFileLoader
{
    public static async Task<MeasureLoadResult> LoadAsync(MeasureLoadRequest request, CancellationToken cancellationToken)
    {
        var progress = new BulkLoadProgress();
        BulkResult result;
        var options = new EngineOptions
        {
            DataDirectory = request.DataDirectory,
            Storage = new StoreOptions(request.MaxDocumentBytes, syncWrites: false),
        };
        var engine = IndexingEngine.Open(options);
        await using (engine.ConfigureAwait(false))
        {
            var file = new FileStream(request.InputFile, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16, FileOptions.SequentialScan | FileOptions.Asynchronous);
            await using (file.ConfigureAwait(false))
            {
                var reader = PipeReader.Create(file, new StreamPipeReaderOptions(bufferSize: 1 << 20));
                // Its own thread: the loader writes to RocksDB synchronously between reads.
                var loading = Task.Run(() => BulkLoad.LoadAsync(reader, engine, request.LimitSetting, progress, cancellationToken), cancellationToken);
                await request.Console.Progress()
                    .AutoClear(false)
                    .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new DownloadedColumn(), new TransferSpeedColumn(), new RemainingTimeColumn())
                    .StartAsync(async context =>
                    {
                        var task = context.AddTask("load", maxValue: Math.Max(1, request.FileBytes));
                        while (!loading.IsCompleted)
                        {
                            task.Value = progress.Bytes;
                            task.Description = $"load: {progress.StoredDocuments:N0} stored, {progress.FailedLines:N0} bad";
                            // No token: on cancel the loader stops at its next line, and this waits for it.
                            await Task.WhenAny(loading, Task.Delay(200, CancellationToken.None)).ConfigureAwait(false);
                        }

                        task.Value = task.MaxValue;
                        task.Description = $"load: {progress.StoredDocuments:N0} stored, {progress.FailedLines:N0} bad";
                    }).ConfigureAwait(false);
                result = await loading.ConfigureAwait(false);
                await reader.CompleteAsync().ConfigureAwait(false);
            }
        }

        return new MeasureLoadResult(
            result.Lines, result.Stored, result.Failed, result.Bytes,
            [.. result.Errors.Select(e => new MeasureLineError(e.Line, e.Id, e.Rule, e.Message))], result.ErrorsNotListed);
    }
}
