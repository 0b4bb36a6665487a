using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// What a verify compares, pinned at one point: the index's ids as of <paramref name="IndexEtag"/>
/// (a held query view, in key order) and a store snapshot taken at that moment (its etag is at least
/// <paramref name="IndexEtag"/>). Dispose releases both, the snapshot first.
/// </summary>
internal sealed record VerifyView(long IndexEtag, IEnumerator<IndexIdEntry> Ids, StoreSnapshot Snapshot) : IDisposable
{
    public void Dispose()
    {
        try
        {
            Snapshot.Dispose();
        }
        finally
        {
            Ids.Dispose();
        }
    }
}

/// <summary>The index compared with the store.</summary>
/// <param name="StoreDocuments">Live documents of the collection in the store.</param>
/// <param name="Missing">Store documents the index lacks.</param>
/// <param name="Extra">Index entries whose document the store does not have.</param>
/// <param name="Stale">Index entries whose etag differs from the store's.</param>
/// <param name="Duplicates">Extra copies of an id in the index.</param>
/// <param name="MissingIds">The first missing ids (up to the limit asked).</param>
/// <param name="ExtraIds">The first extra ids, in key order.</param>
/// <param name="StaleEntries">The first stale entries, as "id (index etag, store etag)".</param>
/// <param name="DuplicateIds">The first duplicated ids.</param>
internal sealed record IndexVerifyResult(
    long StoreDocuments,
    long Missing,
    long Extra,
    long Stale,
    long Duplicates,
    IReadOnlyList<string> MissingIds,
    IReadOnlyList<string> ExtraIds,
    IReadOnlyList<string> StaleEntries,
    IReadOnlyList<string> DuplicateIds)
{
    /// <summary>No differences at all.</summary>
    public bool IsConsistent => Missing == 0 && Extra == 0 && Stale == 0 && Duplicates == 0;
}
