using System.Diagnostics;
using Indexing.Indexer;
using Indexing.Prefetcher;

namespace Indexing.Measurement;

public sealed partial class RebuildWorkload
{
    // The LuceneOnly bound (RebuildMode.LuceneOnly): the same documents IndexOnly indexes, their
    // field values extracted with the clock stopped, added by LuceneOnlyBuild with the clock running,
    // then the final commit; the writer is opened before and closed after, as IndexOnly's index is.
    // A collection held in memory is extracted whole; a larger one a chunk of at most
    // InMemoryLimitBytes of bodies at a time (ChunkedMemoryBatchSource, as IndexOnly reads it),
    // each chunk's loading and extraction outside the clock. The extracted values take about twice
    // the text's bytes besides the bodies (UTF-16 strings), for the length of the run.
    private async Task<RebuildFigures> MeasureLuceneOnlyAsync(
        RebuildDevice device, string indexDirectory, ForegroundReaders? readers, ForegroundLatency? idle, CancellationToken cancellationToken)
    {
        var chunked = _documents is null ? new ChunkedMemoryBatchSource(_store, Definition.Collection, InMemoryLimitBytes) : null;
        try
        {
            using var build = LuceneOnlyBuild.Open(indexDirectory, Definition, IndexOptions);
            await using var sampler = new RunSampler(null, readers);
            var runStarted = Stopwatch.GetTimestamp();
            long timed = 0;
            var processorTime = TimeSpan.Zero;
            var pieces = 0;
            while (await NextPieceAsync(chunked, pieces, cancellationToken).ConfigureAwait(false) is { } documents)
            {
                var extracted = ExtractedDocuments.Extract(Definition, documents, cancellationToken);
                pieces++;
                var started = Stopwatch.GetTimestamp();
                var processorStarted = Environment.CpuUsage.TotalTime;
                await build.AddAsync(extracted, cancellationToken).ConfigureAwait(false);
                timed += Stopwatch.GetTimestamp() - started;
                processorTime += Environment.CpuUsage.TotalTime - processorStarted;
            }

            var committing = Stopwatch.GetTimestamp();
            var processorCommitting = Environment.CpuUsage.TotalTime;
            build.Commit();
            timed += Stopwatch.GetTimestamp() - committing;
            processorTime += Environment.CpuUsage.TotalTime - processorCommitting;
            var elapsed = Stopwatch.GetElapsedTime(0, timed);
            var untimed = Stopwatch.GetElapsedTime(runStarted) - elapsed;
            var timeline = await sampler.StopAsync().ConfigureAwait(false);
            return new RebuildFigures(
                RebuildMode.LuceneOnly,
                device.Name,
                elapsed,
                build.Documents,
                build.Bytes,
                IndexerStall: null,
                PeakInFlightAndBufferedBytes: null,
                LargestOversizedAdmissionBytes: null,
                BudgetBytes: null,
                MeanConcurrency: null,
                sampler.PeakWorkingSetBytes,
                timeline,
                [],
                idle,
                sampler.ForegroundDuringRun,
                IndexOnlyChunks: pieces,
                IndexOnlyLoadingTime: untimed,
                CollectionsDuringRun: sampler.CollectionsDuringRun,
                ProcessorTime: processorTime);
        }
        finally
        {
            if (chunked is not null)
            {
                await chunked.DisposeAsync().ConfigureAwait(false);
            }
        }
    }

    // The documents held in memory (once), or the next chunk's worth of batches; null when done.
    private async Task<IReadOnlyList<PrefetchedDocument>?> NextPieceAsync(ChunkedMemoryBatchSource? chunked, int piecesSoFar, CancellationToken cancellationToken)
    {
        if (chunked is null)
        {
            return piecesSoFar == 0 ? _documents : null;
        }

        var piece = new List<PrefetchedDocument>();
        long bytes = 0;
        while (bytes < InMemoryLimitBytes
            && await chunked.TakeAsync(IndexOptions.TakeMaxDocuments, IndexOptions.TakeMaxBytes, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            piece.AddRange(batch.Documents);
            bytes += batch.TotalBytes;
        }

        return piece.Count == 0 ? null : piece;
    }
}
