using Indexing.Storage;

namespace Indexing.Indexer;

// Verify: does the serving generation hold exactly the store's live documents of its collection,
// each at its current etag? Following is paused so the index stands still at etag X (after a
// catch-up); a store snapshot S is then taken (S >= X). Documents whose etag in S is above X, and
// documents deleted after X, changed while verify ran: they are counted apart, not as errors.
public sealed partial class IndexManager
{
    private const int SampleLimit = 20;

    /// <summary>Compares the serving generation of <paramref name="name"/> with the store: missing, extra and stale entries.</summary>
    /// <exception cref="IndexNotFoundException">No index has that name.</exception>
    public VerifyReport Verify(string name, CancellationToken cancellationToken = default)
    {
        return OnServing(Find(name), serving => Verify(serving, serving.Index.Definition.Collection, cancellationToken));
    }

    private VerifyReport Verify(ServingIndex serving, string collection, CancellationToken cancellationToken)
    {
        var index = serving.Index;
        var following = TryPauseFollowing(index);

        Dictionary<string, long> entries;
        List<string> duplicateIds = [];
        long duplicates;
        long asOf;
        StoreSnapshot snapshot;
        try
        {
            if (index.State is IndexState.Idle or IndexState.Paused && !index.IsStale)
            {
                index.CatchUp(_store, upToEtag: null, cancellationToken);
            }

            asOf = index.GetStatus().AppliedEtag;
            entries = index.ReadEntries(duplicateIds, SampleLimit, out duplicates);
            snapshot = _store.CreateSnapshot();
        }
        finally
        {
            if (following)
            {
                index.ResumeFollowing();
            }
        }

        using (snapshot)
        {
            long storeDocuments = 0, missing = 0, stale = 0, extra = 0, changedDuring = 0;
            List<string> missingIds = [], staleIds = [], extraIds = [];
            foreach (var meta in snapshot.ScanMetadata(collection, cancellationToken: cancellationToken))
            {
                storeDocuments++;
                if (meta.Etag > asOf)
                {
                    changedDuring++;
                    entries.Remove(meta.Id);
                    continue;
                }

                if (!entries.Remove(meta.Id, out var indexedEtag))
                {
                    DocumentIndex.CountAndList(missingIds, meta.Id, ref missing, SampleLimit);
                }
                else if (indexedEtag != meta.Etag)
                {
                    DocumentIndex.CountAndList(staleIds, meta.Id, ref stale, SampleLimit);
                }
            }

            // What is left is in the index but not live in the snapshot: deleted after X (fine) or extra.
            var deletedAfter = new HashSet<string>(StringComparer.Ordinal);
            foreach (var change in _store.ReadChanges(asOf))
            {
                if (change.Etag > snapshot.Etag)
                {
                    break;
                }

                if (change.Deleted)
                {
                    deletedAfter.Add(change.Id);
                }
            }

            foreach (var id in entries.Keys)
            {
                if (deletedAfter.Contains(id))
                {
                    changedDuring++;
                }
                else
                {
                    DocumentIndex.CountAndList(extraIds, id, ref extra, SampleLimit);
                }
            }

            return new VerifyReport(
                index.Name, serving.Generation, asOf, snapshot.Etag, storeDocuments, index.GetStatus().DocumentCount,
                missing, extra, stale, duplicates, changedDuring, missingIds, extraIds, staleIds, duplicateIds);
        }
    }
}

/// <summary>What verify found.</summary>
/// <param name="IndexName">The index.</param>
/// <param name="Generation">The generation verified (the serving one).</param>
/// <param name="IndexEtag">The index held every change up to this etag when compared.</param>
/// <param name="StoreEtag">The store snapshot compared against.</param>
/// <param name="StoreDocuments">Live documents of the collection in the snapshot.</param>
/// <param name="IndexDocuments">Documents in the index.</param>
/// <param name="Missing">Live documents (unchanged since <paramref name="IndexEtag"/>) the index does not hold.</param>
/// <param name="Extra">Documents the index holds that are not live in the store (and were not deleted during verify).</param>
/// <param name="Stale">Documents the index holds at another etag than the store's.</param>
/// <param name="Duplicates">Extra copies of an id in the index.</param>
/// <param name="ChangedDuringVerify">Documents written or deleted after <paramref name="IndexEtag"/>: not judged.</param>
/// <param name="MissingSample">Up to 20 missing ids.</param>
/// <param name="ExtraSample">Up to 20 extra ids.</param>
/// <param name="StaleSample">Up to 20 stale ids.</param>
/// <param name="DuplicateSample">Up to 20 duplicated ids.</param>
public sealed record VerifyReport(
    string IndexName,
    int Generation,
    long IndexEtag,
    long StoreEtag,
    long StoreDocuments,
    long IndexDocuments,
    long Missing,
    long Extra,
    long Stale,
    long Duplicates,
    long ChangedDuringVerify,
    IReadOnlyList<string> MissingSample,
    IReadOnlyList<string> ExtraSample,
    IReadOnlyList<string> StaleSample,
    IReadOnlyList<string> DuplicateSample)
{
    /// <summary>Nothing missing, extra, stale or duplicated.</summary>
    public bool IsConsistent => Missing == 0 && Extra == 0 && Stale == 0 && Duplicates == 0;
}
