using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// Reading documents from the snapshot failed (the store threw, or returned other documents than
/// asked for); names the key range, with the original exception inside. The prefetcher has stopped.
/// Internal: a rebuild records it as its error, so a host sees it only as text.
/// </summary>
internal sealed class PrefetchReadException : IndexingException
{
    private PrefetchReadException(string message, Exception innerException)
        : base(IndexingErrorKind.Failure, message, innerException)
    {
    }

    /// <summary>First id of the range that failed (null when the metadata scan failed before any task).</summary>
    public string? FirstId { get; private init; }

    /// <summary>Last id of the range that failed (inclusive).</summary>
    public string? LastId { get; private init; }

    /// <summary>Whether a source's failure is wrapped: all but OutOfMemoryException and the run's own cancellation.</summary>
    internal static bool ShouldWrap(Exception exception, CancellationToken runToken) =>
        exception is not OutOfMemoryException
        && !(exception is OperationCanceledException && runToken.IsCancellationRequested);

    internal static PrefetchReadException ForTask(ReadTask task, Exception inner)
    {
        var what = task.DocumentCount == 1
            ? $"reading document {MessageText.Quote(task.FirstId)} ({ByteSize.Format(task.Bytes)})"
            : $"reading documents {MessageText.Quote(task.FirstId)}..{MessageText.Quote(task.LastId)} ({task.DocumentCount} documents, {ByteSize.Format(task.Bytes)})";
        return new PrefetchReadException($"{what} failed: {inner.Message}", inner) { FirstId = task.FirstId, LastId = task.LastId };
    }

    internal static PrefetchReadException ForScan(string? lastPlannedId, Exception inner)
    {
        var where = lastPlannedId is null ? "from the start" : $"after {MessageText.Quote(lastPlannedId)}";
        return new PrefetchReadException($"scanning document metadata {where} failed: {inner.Message}", inner) { FirstId = lastPlannedId };
    }
}
