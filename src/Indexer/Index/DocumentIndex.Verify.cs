using Indexing.Storage;

namespace Indexing.Indexer;

// Verify: what the index holds (each live id once, with its etag and copies, in key order from the
// engine's id cursor) against the store's live documents of the collection (ScanMetadata, also in
// key order), walked side by side. Verify here compares with the store as it is now: writes in
// between show as differences. The manager's verify pins both at one point (OpenVerifyView).
internal sealed partial class DocumentIndex
{
    /// <summary>
    /// Compares the index with <paramref name="store"/>: documents missing from the index, entries
    /// the store no longer has, entries holding an older or newer etag than the store, and ids the
    /// index holds more than once. Walks the current query view (refreshed first) and the store's
    /// metadata side by side in key order: memory holds one id of each and the lists.
    /// </summary>
    /// <exception cref="IndexReadException">Reading the index or the store failed.</exception>
    public IndexVerifyResult Verify(DocumentStore store, int maxListed = 100)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentOutOfRangeException.ThrowIfNegative(maxListed);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        RefreshForQueries();
        using var ids = OpenIdCursor();
        List<string> missing = [], extra = [], stale = [], duplicates = [];
        long missingCount = 0, extraCount = 0, staleCount = 0, duplicateCount = 0, storeCount = 0;
        var hasEntry = NextVerifyEntry(ids);
        try
        {
            foreach (var metadata in store.ScanMetadata(Definition.Collection))
            {
                storeCount++;
                while (hasEntry && DocumentIds.CompareKeyOrder(ids.Current.Id, metadata.Id) < 0)
                {
                    VerifySamples.CountDuplicates(ids.Current, duplicates, ref duplicateCount, maxListed);
                    VerifySamples.CountAndList(extra, ids.Current.Id, ref extraCount, maxListed);
                    hasEntry = NextVerifyEntry(ids);
                }

                if (!hasEntry || !string.Equals(ids.Current.Id, metadata.Id, StringComparison.Ordinal))
                {
                    VerifySamples.CountAndList(missing, metadata.Id, ref missingCount, maxListed);
                    continue;
                }

                var entry = ids.Current;
                VerifySamples.CountDuplicates(entry, duplicates, ref duplicateCount, maxListed);
                if (entry.Etag != metadata.Etag)
                {
                    VerifySamples.CountAndList(stale, $"{metadata.Id} (index {entry.Etag}, store {metadata.Etag})", ref staleCount, maxListed);
                }

                hasEntry = NextVerifyEntry(ids);
            }
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(Name, $"scanning the store for verify failed: {exception.Message}", exception);
        }

        while (hasEntry)
        {
            VerifySamples.CountDuplicates(ids.Current, duplicates, ref duplicateCount, maxListed);
            VerifySamples.CountAndList(extra, ids.Current.Id, ref extraCount, maxListed);
            hasEntry = NextVerifyEntry(ids);
        }

        return new IndexVerifyResult(storeCount, missingCount, extraCount, staleCount, duplicateCount, missing, extra, stale, duplicates);
    }

    // The index's next id for a verify walk; the engine's failures wrapped once, naming the index.
    internal bool NextVerifyEntry(IEnumerator<IndexIdEntry> ids)
    {
        try
        {
            return ids.MoveNext();
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(Name, $"reading its entries for verify failed: {exception.Message}", exception);
        }
    }

    private IEnumerator<IndexIdEntry> OpenIdCursor()
    {
        try
        {
            return _searcher.OpenIdCursor();
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(Name, $"opening its entries for verify failed: {exception.Message}", exception);
        }
    }

    /// <summary>
    /// Pins what the manager's verify compares: under the write gate (no step runs, so the writer
    /// holds exactly the changes through the applied etag), refreshes the query view, opens an id
    /// cursor on it and takes a store snapshot. Following waits only for this, not for the comparison.
    /// </summary>
    internal VerifyView OpenVerifyView(DocumentStore store)
    {
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        lock (_writeGate)
        {
            var applied = _checkpoints.AppliedEtag;
            RefreshForQueries();
            var ids = OpenIdCursor();

            try
            {
                // Taken while the index stands at the applied etag: the store's tombstone watermark
                // counts this index, so no change after that etag can be purged before the snapshot.
                return new VerifyView(applied, ids, store.CreateSnapshot());
            }
            catch
            {
                ids.Dispose();
                throw;
            }
        }
    }
}
