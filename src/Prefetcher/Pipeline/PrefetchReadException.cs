using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// Reading documents from the snapshot failed (the store threw, or returned something other than
/// the documents asked for). Names the key range so the failure can be traced to the data; the
/// original exception is the inner exception. The prefetcher that raised it has stopped.
/// </summary>
public sealed class PrefetchReadException : Exception
{
    private PrefetchReadException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>First id of the range that failed (null when the metadata scan failed before any task).</summary>
    public string? FirstId { get; private init; }

    /// <summary>Last id of the range that failed (inclusive).</summary>
    public string? LastId { get; private init; }

    /// <summary>
    /// Whether a failure of the read source becomes a <see cref="PrefetchReadException"/>: all but
    /// OutOfMemoryException and the cancellation the run itself asked for. A source's own
    /// OperationCanceledException (an internal timeout, say) is a failure, not a cancellation.
    /// </summary>
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
