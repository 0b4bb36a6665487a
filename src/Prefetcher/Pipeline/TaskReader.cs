using System.Diagnostics;

using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// Reads one task through the source and does the bookkeeping of a read: checks that the source
/// returned exactly the task's documents (ids and etags), records their sizes and times the read.
/// A failure is wrapped once, here, as <see cref="PrefetchReadException"/> naming the key range
/// (see <see cref="PrefetchReadException.ShouldWrap"/>); the reservation stays the caller's either
/// way. Thread-safe (stateless besides the thread-safe source and meter).
/// </summary>
internal sealed class TaskReader(IDocumentReadSource source, PrefetchMeter meter)
{
    public CompletedRead Read(ReadTask task, CancellationToken cancellationToken)
    {
        var documents = new List<PrefetchedDocument>(task.DocumentCount);
        var started = Stopwatch.GetTimestamp();
        meter.ReadStarted();
        TimeSpan latency;
        long bytes;
        try
        {
            try
            {
                source.Read(task, documents, cancellationToken);
            }
            finally
            {
                latency = Stopwatch.GetElapsedTime(started);
                meter.ReadEnded();
            }

            bytes = Check(task, documents);
        }
        catch (Exception exception) when (PrefetchReadException.ShouldWrap(exception, cancellationToken))
        {
            throw PrefetchReadException.ForTask(task, exception);
        }

        meter.Sizes.RecordBatch(documents);
        meter.ReadCompleted(bytes, documents.Count, latency);
        return new CompletedRead(task, documents, bytes);
    }

    // Under a snapshot the store must return exactly what its metadata listed; anything else is a
    // bug or corruption, and passing it on would silently drop or duplicate documents.
    private static long Check(ReadTask task, List<PrefetchedDocument> documents)
    {
        if (documents.Count != task.DocumentCount)
        {
            throw new InvalidOperationException(
                $"the source returned {documents.Count} documents for a task of {task.DocumentCount}; a snapshot read must return every listed document once.");
        }

        long bytes = 0;
        for (var i = 0; i < documents.Count; i++)
        {
            if (!string.Equals(documents[i].Id, task.Ids[i], StringComparison.Ordinal))
            {
                throw new InvalidOperationException(
                    $"the source returned {MessageText.Quote(documents[i].Id)} where {MessageText.Quote(task.Ids[i])} was expected; documents must come in the task's key order.");
            }

            if (documents[i].Etag != task.Etags[i])
            {
                throw new InvalidOperationException(
                    $"the source returned {MessageText.Quote(documents[i].Id)} with etag {documents[i].Etag} where the metadata scan listed {task.Etags[i]}; a document must carry its snapshot etag.");
            }

            bytes += documents[i].SizeBytes;
        }

        return bytes;
    }
}
