using Indexing.Storage;

namespace Indexing.Indexer;

// Verify: what the index holds (id and etag of every live entry, as the engine's searcher reads
// them) against the store's live documents of the collection (ScanMetadata). Meaningful when the
// two are at the same point: pause following and catch up first, or expect the writes in between
// to show as differences.
public sealed partial class DocumentIndex
{
    /// <summary>
    /// Compares the index with <paramref name="store"/>: documents missing from the index, entries
    /// the store no longer has, entries holding an older or newer etag than the store, and ids the
    /// index holds more than once. Reads every entry of the current query view (refresh first).
    /// </summary>
    /// <exception cref="IndexReadException">Reading the index or the store failed.</exception>
    public IndexVerifyResult Verify(DocumentStore store, int maxListed = 100)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentOutOfRangeException.ThrowIfNegative(maxListed);
        var duplicates = new List<string>();
        var indexed = ReadEntries(duplicates, maxListed, out var duplicateCount);

        var missing = new List<string>();
        var stale = new List<string>();
        long missingCount = 0, staleCount = 0, storeCount = 0;
        try
        {
            foreach (var metadata in store.ScanMetadata(Definition.Collection))
            {
                storeCount++;
                if (!indexed.Remove(metadata.Id, out var etag))
                {
                    CountAndList(missing, metadata.Id, ref missingCount, maxListed);
                }
                else if (etag != metadata.Etag)
                {
                    CountAndList(stale, $"{metadata.Id} (index {etag}, store {metadata.Etag})", ref staleCount, maxListed);
                }
            }
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(Name, $"scanning the store for verify failed: {exception.Message}", exception);
        }

        var extra = indexed.Keys.Order(StringComparer.Ordinal).Take(maxListed).ToList();
        return new IndexVerifyResult(storeCount, missingCount, indexed.Count, staleCount, duplicateCount, missing, extra, stale, duplicates);
    }

    // Every live entry's id and etag as the query view shows them after a refresh: what Verify
    // compares with the store now, and the manager's verify with a store snapshot at a known point.
    internal Dictionary<string, long> ReadEntries(List<string> duplicates, int maxListed, out long duplicateCount)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        RefreshForQueries();
        duplicateCount = 0;
        var indexed = new Dictionary<string, long>(StringComparer.Ordinal);
        try
        {
            foreach (var entry in _searcher.ReadEntries())
            {
                if (!indexed.TryAdd(entry.Id, entry.Etag))
                {
                    CountAndList(duplicates, entry.Id, ref duplicateCount, maxListed);
                }
            }
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(Name, $"reading its entries for verify failed: {exception.Message}", exception);
        }

        return indexed;
    }

    // Counts a finding and lists it while the list has room (the verify reports' samples).
    internal static void CountAndList(List<string> list, string item, ref long count, int maxListed)
    {
        count++;
        if (list.Count < maxListed)
        {
            list.Add(item);
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
public sealed record IndexVerifyResult(
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
