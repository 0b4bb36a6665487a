namespace Indexing.Prefetcher;

/// <summary>
/// The highest key up to which every document of the run was handed out (see
/// <see cref="PrefetchBatch.HandedOutThrough"/>): the LastId of the longest prefix of tasks taken
/// completely, as reads complete out of key order. Threading: <see cref="HandedOut"/> under the
/// take lock; <see cref="Through"/> from any thread.
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
