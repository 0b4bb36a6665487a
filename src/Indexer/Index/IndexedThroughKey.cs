namespace Indexing.Indexer;

// A bulk build's "indexed through" key: every document of the build's snapshot with an id at or
// below it (UTF-8 key order) has been added to the writer, so a commit begun after reading it holds
// them all, and a resumed build reads only the ids after it.
//
// The source's own HandedOutThrough is not that key: a batch handed out waits in the channel and
// then on a worker, and with several workers later batches finish first. So the feeder numbers each
// batch it takes and keeps the batch's HandedOutThrough (every document at or below it was handed
// out in this batch or an earlier one); a worker marks the batch complete once its last document
// was added; the key is the HandedOutThrough of the highest batch number whose every predecessor is
// complete (the contiguous completed prefix). A batch with no HandedOutThrough (no prefix of the
// source was complete yet) leaves the key where it was.
//
// Threading: Taken is called by the feeder, Completed by the workers, Through from any thread;
// a lock per batch (not per document) keeps the pending map consistent. The map holds only the
// batches taken and not yet in the prefix: at most the channel's capacity plus one per worker,
// plus those finished ahead of a slow one.
internal sealed class IndexedThroughKey(string? startAfter)
{
    private readonly System.Threading.Lock _lock = new();
    private readonly Dictionary<long, string?> _handedOutThrough = [];
    private readonly HashSet<long> _completedAhead = [];
    private long _taken;
    private long _next;
    private string? _through = startAfter;

    /// <summary>The key: every document up to it (inclusive) is in the writer; the resumed-after key (or null) before any batch completed.</summary>
    public string? Through => Volatile.Read(ref _through);

    /// <summary>Batches completed in order so far (the prefix's length).</summary>
    public long CompletedBatches => Volatile.Read(ref _next);

    /// <summary>Numbers a batch the feeder took (0, 1, 2, ...) and keeps its HandedOutThrough.</summary>
    public long Taken(string? handedOutThrough)
    {
        lock (_lock)
        {
            var number = _taken++;
            _handedOutThrough.Add(number, handedOutThrough);
            return number;
        }
    }

    /// <summary>The batch numbered <paramref name="number"/> was added to the writer, every document of it.</summary>
    public void Completed(long number)
    {
        lock (_lock)
        {
            if (number < _next || number >= _taken || !_completedAhead.Add(number))
            {
                throw new InvalidOperationException($"batch {number} was completed twice or never taken (taken {_taken}, prefix {_next}); each batch is completed once.");
            }

            var through = _through;
            while (_completedAhead.Remove(_next))
            {
                _handedOutThrough.Remove(_next, out var batchThrough);
                through = batchThrough ?? through;
                _next++;
            }

            Volatile.Write(ref _through, through);
        }
    }
}
