namespace Indexing.Prefetcher;

/// <summary>
/// The highest key below which every document of the run has been handed to the consumer: what a
/// resumable rebuild checkpoints. Reads complete (and are handed out) out of key order, so the
/// watermark is the LastId of the longest prefix of tasks, in sequence (= key) order, whose every
/// document was taken. Tasks handed out ahead of a gap wait in a map until the gap closes; the
/// map holds at most the tasks the budget lets be read ahead, so it stays small.
/// <para>
/// Threading: <see cref="HandedOut"/> is called under the take lock (one caller at a time);
/// <see cref="Through"/> is read from any thread.
/// </para>
/// </summary>
internal sealed class HandOutWatermark(string? startAfterId)
{
    private readonly Dictionary<long, string> _ahead = [];
    private long _next;
    private string? _through = startAfterId;

    /// <summary>Every document with an id up to this one (inclusive) was handed out; the start key (or null) before any.</summary>
    public string? Through => Volatile.Read(ref _through);

    /// <summary>Records that the last document of <paramref name="task"/> was taken.</summary>
    public void HandedOut(ReadTask task)
    {
        if (task.Sequence != _next)
        {
            if (task.Sequence < _next || !_ahead.TryAdd(task.Sequence, task.LastId))
            {
                throw new InvalidOperationException(
                    $"Task {task.Sequence} was handed out twice; every task's documents are handed out exactly once.");
            }

            return;
        }

        var through = task.LastId;
        _next++;
        while (_ahead.Remove(_next, out var lastId))
        {
            through = lastId;
            _next++;
        }

        Volatile.Write(ref _through, through);
    }
}
