using System.Diagnostics;
using System.Runtime.ExceptionServices;
using System.Threading.Channels;

using Indexing.Prefetcher;

namespace Indexing.Indexer;

/// <summary>
/// The pipeline of one bulk build of a <see cref="DocumentIndex"/>: the calling task takes batches
/// from the source ("whatever is ready"), numbers them and hands them through a bounded channel to
/// <see cref="IndexOptions.IndexingThreads"/> workers, each writing with its own writer into the one
/// engine, a batch at a time while it holds one of the engine's indexing slots (<see cref="IndexingSlots"/>:
/// builds running together share the threads' worth of CPU); a commit loop runs beside them. Stall is the workers' time waiting on the channel: time
/// the indexer had nothing to do. Owns the channel, the worker threads and the build's failure
/// token; what writing a document is, and the commits, are the index's.
/// </summary>
/// <remarks>
/// Threading: one <see cref="RunAsync"/> per build, from the build's task; the workers run on
/// dedicated threads and report each batch they finish to the <see cref="IndexedThroughKey"/>.
/// </remarks>
internal sealed class BuildPipeline(IndexOptions options, IndexMeter meter)
{
    /// <summary>
    /// Runs the build until the source is exhausted and every worker and the commit loop ended.
    /// <paramref name="newWriter"/> is called once on each worker's thread and returns how that
    /// worker writes one document (true: it was added, i.e. it is of the index's collection);
    /// <paramref name="commitLoop"/> runs until its token is cancelled, after the workers ended.
    /// A failure of any worker, of the commit loop or of the source stops the rest; what is thrown
    /// then is the first cause (<see cref="FirstCause"/>), not the cancellation it caused elsewhere.
    /// </summary>
    public async Task RunAsync(
        IBatchSource source,
        IndexedThroughKey key,
        Func<Func<PrefetchedDocument, bool>> newWriter,
        Func<CancellationToken, Task> commitLoop,
        CancellationToken cancellationToken,
        CancellationToken closing)
    {
        var threads = options.IndexingThreads;
        // The engine's slots, shared with every other build; alone, this build's own.
        var slots = options.IndexingSlots ?? new IndexingSlots(threads);
        // Cancelled by the caller, by the index closing, or by the first worker or bulk commit that
        // fails (so the feeder never waits on a channel nobody reads any more).
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, closing);
        using var stopCommits = CancellationTokenSource.CreateLinkedTokenSource(failed.Token);
        var batches = Channel.CreateBounded<NumberedBatch>(new BoundedChannelOptions(threads)
        {
            SingleWriter = true,
            SingleReader = threads == 1,
            FullMode = BoundedChannelFullMode.Wait,
        });
        var workers = new Task[threads + 1];
        for (var i = 0; i < threads; i++)
        {
            // A dedicated thread at the indexing nice value (IndexingThread says why not the pool).
            workers[i] = IndexingThread.Start(
                $"indexing-{i + 1}",
                options.IndexingThreadNice,
                () =>
                {
                    try
                    {
                        Worker(batches.Reader, key, threads, slots, newWriter(), failed.Token);
                    }
                    catch
                    {
                        failed.Cancel();
                        throw;
                    }
                });
        }

        workers[threads] = FailFast(() => commitLoop(stopCommits.Token), failed);

        try
        {
            try
            {
                while (await source.TakeAsync(options.TakeMaxDocuments, options.TakeMaxBytes, failed.Token).ConfigureAwait(false) is { } batch)
                {
                    meter.Read(batch.Count);
                    await batches.Writer.WriteAsync(new NumberedBatch(batch, key.Taken(batch.HandedOutThrough)), failed.Token).ConfigureAwait(false);
                }
            }
            finally
            {
                batches.Writer.TryComplete();
            }

            await Task.WhenAll(workers.AsSpan(0, threads)).ConfigureAwait(false);
            await stopCommits.CancelAsync().ConfigureAwait(false);
            await workers[threads].ConfigureAwait(false);
        }
        catch (Exception exception)
        {
            // Stop every worker, then let the first failure speak: a worker's or the commit loop's
            // own exception, not the cancellation it caused the feeder to see.
            await failed.CancelAsync().ConfigureAwait(false);
            await Task.WhenAll(workers).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            ExceptionDispatchInfo.Throw(FirstCause(exception, workers, cancellationToken.IsCancellationRequested || closing.IsCancellationRequested));
        }
    }

    // What stopped a build: an engine failure of any worker or of the commit loop first (the others
    // then saw only the cancellation it caused); else a worker's own exception when the feeder saw
    // only the cancellation that worker caused; else what the feeder saw.
    private static Exception FirstCause(Exception feederSaw, Task[] workers, bool cancelledFromOutside)
    {
        Exception? workerFailure = null;
        foreach (var worker in workers)
        {
            switch (worker.Exception?.InnerException)
            {
                case IndexWriteException writeFailure:
                    return writeFailure;
                case { } other when other is not OperationCanceledException:
                    workerFailure ??= other;
                    break;
            }
        }

        return feederSaw is OperationCanceledException && !cancelledFromOutside && workerFailure is not null ? workerFailure : feederSaw;
    }

    // Runs the commit loop; its failure cancels the rest of the build.
    private static Task FailFast(Func<Task> run, CancellationTokenSource failed) => Task.Run(
        async () =>
        {
            try
            {
                await run().ConfigureAwait(false);
            }
            catch
            {
                await failed.CancelAsync().ConfigureAwait(false);
                throw;
            }
        },
        CancellationToken.None);

    // Runs on its own thread, so it blocks while it waits.
    private void Worker(
        ChannelReader<NumberedBatch> batches, IndexedThroughKey key, int threads, IndexingSlots slots, Func<PrefetchedDocument, bool> write, CancellationToken cancellationToken)
    {
        while (true)
        {
            if (!batches.TryRead(out var numbered))
            {
                var waitStart = Stopwatch.GetTimestamp();
                var more = batches.WaitToReadAsync(cancellationToken).AsTask().GetAwaiter().GetResult();
                // Per thread share, so the total reads as "the indexer waited this long".
                meter.Stalled((Stopwatch.GetTimestamp() - waitStart) / threads);
                if (!more)
                {
                    return;
                }

                continue;
            }

            // Waiting for a slot is waiting for CPU that other builds use, not a stall: not metered.
            var added = new List<string>(numbered.Batch.Count);
            slots.Enter(cancellationToken);
            try
            {
                foreach (var document in numbered.Batch.Documents)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    options.BuildDocumentHook?.Invoke(document.Id);
                    if (write(document))
                    {
                        added.Add(document.Id);
                    }
                }
            }
            finally
            {
                slots.Exit();
            }

            key.Completed(numbered.Number, added);
        }
    }

    // A batch and its number in the order the feeder took it.
    private readonly record struct NumberedBatch(PrefetchBatch Batch, long Number);
}
