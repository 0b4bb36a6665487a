using System.Diagnostics;
using System.Threading.Channels;

using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

// Bulk build: every document of a snapshot, from a batch source, into an empty index.
//
// The calling task takes batches ("whatever is ready") and hands them through a bounded channel
// to IndexingThreads workers, each adding with its own sink writer into the one engine (the Lucene
// engine's IndexWriter gives each thread its own in-memory segment, DocumentsWriterPerThread). Stall
// is the workers' time waiting on the channel: time the indexer had nothing to do.
//
// Checkpoints: a commit at the start records the snapshot etag as "build in progress"; commits by
// bytes/time keep that marker (a crash leaves an index that says it is incomplete); the last
// commit records the snapshot etag as the index's etag, from which following continues.
public sealed partial class DocumentIndex
{
    /// <summary>
    /// Indexes every document <paramref name="source"/> hands out (those outside the definition's
    /// collection are skipped), then commits with the source's snapshot etag as the checkpoint. The
    /// index must be new (or hold an interrupted build, which is discarded first).
    /// </summary>
    /// <returns>What the build did and where its time went.</returns>
    /// <exception cref="InvalidOperationException">The index is not new, is stale, or is busy (following, building, in error).</exception>
    /// <exception cref="IndexWriteException">The engine failed; the index is in <see cref="IndexState.Error"/>.</exception>
    /// <exception cref="PrefetchReadException">The source failed to read; the index keeps the interrupted build until rebuilt.</exception>
    public async Task<IndexMetrics> BuildAsync(IBatchSource source, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(source);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        ThrowIfStale("build");
        Transition(IndexState.Building, "start a build", IndexState.Idle);
        try
        {
            var build = BuildCoreAsync(source, cancellationToken);
            _activeBuild = build;
            return await build.ConfigureAwait(false);
        }
        finally
        {
            _activeBuild = null;
            SetState(IndexState.Idle);
        }
    }

    private async Task<IndexMetrics> BuildCoreAsync(IBatchSource source, CancellationToken cancellationToken)
    {
        var snapshotEtag = source.SnapshotEtag;
        var before = _meter.Snapshot();
        var started = Stopwatch.GetTimestamp();
        lock (_writeGate)
        {
            if (_buildSnapshotEtag is null && (Volatile.Read(ref _appliedEtag) != 0 || _searcher.DocumentCount != 0))
            {
                throw new InvalidOperationException(
                    $"index {MessageText.Quote(Name)} already holds documents up to etag {Volatile.Read(ref _appliedEtag)}; " +
                    "a build goes into a new index: open one in a new directory (side-by-side rebuild), or delete this one first.");
            }

            try
            {
                if (_buildSnapshotEtag is not null)
                {
                    // An interrupted build: what it wrote is a partial, unknown set; start over.
                    _sink.DeleteAll();
                }
            }
            catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
            {
                throw RecordIndexFailure(new IndexWriteException(Name, null, $"discarding an interrupted build failed: {exception.Message}", exception));
            }

            _buildSnapshotEtag = snapshotEtag;
            CommitLocked();
        }

        var threads = Options.IndexingThreads;
        // Cancelled by the caller, by Dispose, or by the first worker that fails (so the feeder
        // never waits on a channel nobody reads any more).
        using var failed = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, _closing.Token);
        var batches = Channel.CreateBounded<PrefetchBatch>(new BoundedChannelOptions(threads)
        {
            SingleWriter = true,
            SingleReader = threads == 1,
            FullMode = BoundedChannelFullMode.Wait,
        });
        var workers = new Task[threads];
        for (var i = 0; i < threads; i++)
        {
            workers[i] = Task.Run(
                async () =>
                {
                    try
                    {
                        await BuildWorkerAsync(batches.Reader, threads, failed.Token).ConfigureAwait(false);
                    }
                    catch
                    {
                        await failed.CancelAsync().ConfigureAwait(false);
                        throw;
                    }
                },
                CancellationToken.None);
        }

        try
        {
            try
            {
                while (await source.TakeAsync(Options.TakeMaxDocuments, Options.TakeMaxBytes, failed.Token).ConfigureAwait(false) is { } batch)
                {
                    _meter.Read(batch.Count);
                    await batches.Writer.WriteAsync(batch, failed.Token).ConfigureAwait(false);
                    if (CommitDue(changedSinceCommit: true))
                    {
                        lock (_writeGate)
                        {
                            CommitLocked();
                        }
                    }
                }
            }
            finally
            {
                batches.Writer.TryComplete();
            }

            await Task.WhenAll(workers).ConfigureAwait(false);
        }
        catch (Exception exception) when (exception is not IndexWriteException)
        {
            // The feeder failed or was cancelled: stop the workers and let the first failure speak.
            await failed.CancelAsync().ConfigureAwait(false);
            await Task.WhenAll(workers).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            foreach (var worker in workers)
            {
                if (worker.Exception?.InnerException is IndexWriteException writeFailure)
                {
                    throw RecordIndexFailure(writeFailure);
                }
            }

            throw;
        }
        catch (IndexWriteException failure)
        {
            await failed.CancelAsync().ConfigureAwait(false);
            await Task.WhenAll(workers).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            throw RecordIndexFailure(failure);
        }

        lock (_writeGate)
        {
            Volatile.Write(ref _appliedEtag, snapshotEtag);
            _buildSnapshotEtag = null;
            CommitLocked();
        }

        _sink.Refresh();
        RecordSuccess();
        return _meter.Since(before, Stopwatch.GetElapsedTime(started));
    }

    private async Task BuildWorkerAsync(ChannelReader<PrefetchBatch> batches, int threads, CancellationToken cancellationToken)
    {
        var context = CreateWriteContext();
        while (true)
        {
            if (!batches.TryRead(out var batch))
            {
                var waitStart = Stopwatch.GetTimestamp();
                var more = await batches.WaitToReadAsync(cancellationToken).ConfigureAwait(false);
                // Per thread share, so the total reads as "the indexer waited this long".
                _meter.Stalled((Stopwatch.GetTimestamp() - waitStart) / threads);
                if (!more)
                {
                    return;
                }

                continue;
            }

            foreach (var document in batch.Documents)
            {
                cancellationToken.ThrowIfCancellationRequested();
                if (InCollection(document.Id))
                {
                    WriteDocument(context, document.Id, document.Etag, document.Body.Span);
                }
            }
        }
    }
}
