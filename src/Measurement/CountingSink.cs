using Indexing.Prefetcher;

namespace Indexing.Measurement;

// The demo's consumer: takes whatever is ready and counts it, checking what an indexer relies on
// (every document once, etags within the snapshot). It also counts how often a document arrived
// before one with a smaller key: completion order at work, a giant being overtaken by small ones.
// Fed by a PrefetchPass.
public sealed class CountingSink
{
    private readonly HashSet<string> _seen = new(StringComparer.Ordinal);
    private string? _previousId;

    public long Documents { get; private set; }

    public long Bytes { get; private set; }

    public long Batches { get; private set; }

    public long Duplicates { get; private set; }

    public long EtagsAfterSnapshot { get; private set; }

    public long OvertakenDocuments { get; private set; }

    internal async Task DrainAsync(IBatchSource source, CancellationToken cancellationToken)
    {
        while (await source.TakeAsync(maxDocuments: 1024, maxBytes: 16L << 20, cancellationToken).ConfigureAwait(false) is { } batch)
        {
            Batches++;
            foreach (var document in batch.Documents)
            {
                Documents++;
                Bytes += document.SizeBytes;
                if (!_seen.Add(document.Id))
                {
                    Duplicates++;
                }

                if (document.Etag > source.SnapshotEtag)
                {
                    EtagsAfterSnapshot++;
                }

                if (_previousId is not null && Storage.DocumentIds.CompareKeyOrder(document.Id, _previousId) < 0)
                {
                    OvertakenDocuments++;
                }

                _previousId = document.Id;
            }
        }
    }
}
