using System.Collections.Concurrent;
using Indexing.Storage;

namespace Indexing.Indexer;

// Verify: does the serving generation hold exactly the store's live documents of its collection,
// each at its current etag? The index pins a view at its applied etag X and a store snapshot S
// (S >= X) in one step under its write gate (DocumentIndex.OpenVerifyView); following then goes on
// while both are walked side by side in key order, so memory holds one id of each and the samples,
// whatever the collection's size. Documents written after X (live in S at an etag above X) and
// documents deleted after X (a delete in S's change feed after X) changed while verify ran: they are
// counted apart, not as errors. One verify runs at a time per index (VerifyConflictException).

/// <summary>
/// An <see cref="IndexManager"/>'s verification: which indexes a verify is running on (one at a
/// time per index), and the comparison of a serving generation with the store.
/// </summary>
/// <remarks>
/// Threading: any thread; verifies of different indexes run concurrently. The slots are a
/// concurrent map of their own, apart from the manager's lock: a verify holds no lock of the
/// manager while it walks the index and the store.
/// </remarks>
internal sealed class IndexVerifier(DocumentStore store)
{
    private const int SampleLimit = 20;

    private readonly ConcurrentDictionary<string, DateTimeOffset> _verifying = new(StringComparer.Ordinal);

    /// <summary>Test hook: runs once a verify holds the index's verify slot, before it reads anything.</summary>
    public Action<string>? StartedHook { get; set; }

    /// <summary>Test hook: runs after every id the verify walk has judged (the store's or the index's).</summary>
    public Action<string>? StepHook { get; set; }

    /// <summary>Runs <paramref name="verify"/> holding the verify slot of index <paramref name="name"/>.</summary>
    /// <exception cref="VerifyConflictException">A verify of the index is already running.</exception>
    public VerifyReport InSlot(string name, Func<VerifyReport> verify)
    {
        if (!_verifying.TryAdd(name, DateTimeOffset.UtcNow))
        {
            throw new VerifyConflictException(name, _verifying.GetValueOrDefault(name, DateTimeOffset.UtcNow));
        }

        try
        {
            StartedHook?.Invoke(name);
            return verify();
        }
        finally
        {
            _verifying.TryRemove(name, out _);
        }
    }

    /// <summary>Compares <paramref name="serving"/> with the store's live documents of <paramref name="collection"/>.</summary>
    public VerifyReport Compare(ServingIndex serving, string collection, CancellationToken cancellationToken)
    {
        var index = serving.Index;
        if (index.State is IndexState.Idle or IndexState.Paused or IndexState.Following && !index.IsStale)
        {
            // Up to the store as verify starts (a bound, so writes that go on cannot keep it busy), step
            // by step beside the follow loop rather than in its place: the comparison then judges what
            // was written before the request instead of counting the index's lag as changed meanwhile.
            index.CatchUp(store, upToEtag: store.LastEtag, cancellationToken);
        }

        using var view = index.OpenVerifyView(store);
        var asOf = view.IndexEtag;
        var snapshot = view.Snapshot;

        // Deleted after X: the deletes among the changes the index had not applied yet when both were
        // taken (its lag), so this set grows with the lag, not with the collection.
        var deletedAfter = new HashSet<string>(StringComparer.Ordinal);
        foreach (var change in snapshot.ReadChanges(asOf))
        {
            if (change.Deleted)
            {
                deletedAfter.Add(change.Id);
            }
        }

        long storeDocuments = 0, missing = 0, stale = 0, extra = 0, duplicates = 0, changedDuring = 0;
        List<string> missingIds = [], staleIds = [], extraIds = [], duplicateIds = [];
        var ids = view.Ids;
        var hasEntry = index.NextVerifyEntry(ids);
        try
        {
            foreach (var meta in snapshot.ScanMetadata(collection, cancellationToken: cancellationToken))
            {
                storeDocuments++;
                // Index ids before this document: not live in the snapshot.
                while (hasEntry && DocumentIds.CompareKeyOrder(ids.Current.Id, meta.Id) < 0)
                {
                    JudgeIndexOnly(ids.Current);
                    hasEntry = index.NextVerifyEntry(ids);
                }

                var entry = hasEntry && string.Equals(ids.Current.Id, meta.Id, StringComparison.Ordinal) ? ids.Current : (IndexIdEntry?)null;
                if (entry is { } held)
                {
                    CountDuplicates(held);
                    hasEntry = index.NextVerifyEntry(ids);
                }

                if (meta.Etag > asOf)
                {
                    changedDuring++;
                }
                else if (entry is null)
                {
                    VerifySamples.CountAndList(missingIds, meta.Id, ref missing, SampleLimit);
                }
                else if (entry.Value.Etag != meta.Etag)
                {
                    VerifySamples.CountAndList(staleIds, meta.Id, ref stale, SampleLimit);
                }

                StepHook?.Invoke(meta.Id);
            }

            while (hasEntry)
            {
                cancellationToken.ThrowIfCancellationRequested();
                JudgeIndexOnly(ids.Current);
                hasEntry = index.NextVerifyEntry(ids);
            }
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(index.Name, $"comparing the index with the store for verify failed: {exception.Message}", exception);
        }

        return new VerifyReport(
            index.Name, serving.Generation, asOf, snapshot.Etag, storeDocuments, index.GetStatus().DocumentCount,
            missing, extra, stale, duplicates, changedDuring, missingIds, extraIds, staleIds, duplicateIds);

        // In the index, not live in the snapshot: deleted after X (fine) or extra.
        void JudgeIndexOnly(IndexIdEntry entry)
        {
            CountDuplicates(entry);
            if (deletedAfter.Contains(entry.Id))
            {
                changedDuring++;
            }
            else
            {
                VerifySamples.CountAndList(extraIds, entry.Id, ref extra, SampleLimit);
            }

            StepHook?.Invoke(entry.Id);
        }

        void CountDuplicates(IndexIdEntry entry) => VerifySamples.CountDuplicates(entry, duplicateIds, ref duplicates, SampleLimit);
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
