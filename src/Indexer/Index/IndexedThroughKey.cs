using Indexing.Storage;

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
// source was complete yet) leaves the key where it was. Each completed batch also names the
// documents it added; Added counts those at or below the key: what a commit at the key must hold
// there beyond what the index held at or below the key the build started after. A batch in the
// prefix may hold ids above the key (batches come in completion order, not key order): those wait
// in a sorted overhang until the key passes them.
//
// Threading: Taken is called by the feeder, Completed by the workers, Through from any thread;
// a lock per batch (not per document) keeps the pending map consistent. The map holds only the
// batches taken and not yet in the prefix: at most the channel's capacity plus one per worker,
// plus those finished ahead of a slow one.
internal sealed class IndexedThroughKey(string? startAfter)
{
    private readonly System.Threading.Lock _lock = new();
    private readonly Dictionary<long, string?> _handedOutThrough = [];
    private readonly Dictionary<long, IReadOnlyList<string>> _completedAhead = [];
    private readonly SortedSet<string> _overhang = new(Comparer<string>.Create(DocumentIds.CompareKeyOrder));
    private long _taken;
    private long _next;
    private string? _through = startAfter;
    private long _added;

    /// <summary>The key: every document up to it (inclusive) is in the writer; the resumed-after key (or null) before any batch completed.</summary>
    public string? Through => Volatile.Read(ref _through);

    /// <summary>The key and the documents added in the batches up to it, read together.</summary>
    public (string? Through, long Added) Prefix()
    {
        lock (_lock)
        {
            return (_through, _added);
        }
    }

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

    /// <summary>The batch numbered <paramref name="number"/> was added to the writer, every document of it (<paramref name="added"/>: the ids indexed).</summary>
    public void Completed(long number, IReadOnlyList<string> added)
    {
        lock (_lock)
        {
            if (number < _next || number >= _taken || !_completedAhead.TryAdd(number, added))
            {
                throw new InvalidOperationException($"batch {number} was completed twice or never taken (taken {_taken}, prefix {_next}); each batch is completed once.");
            }

            var through = _through;
            while (_completedAhead.Remove(_next, out var batchAdded))
            {
                _overhang.UnionWith(batchAdded);
                _handedOutThrough.Remove(_next, out var batchThrough);
                through = batchThrough ?? through;
                _next++;
            }

            while (through is not null && _overhang.Count > 0 && DocumentIds.CompareKeyOrder(_overhang.Min!, through) <= 0)
            {
                _overhang.Remove(_overhang.Min!);
                _added++;
            }

            Volatile.Write(ref _through, through);
        }
    }
}
