using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// What one index holds of the store's tombstones (the rules: <c>IndexManager.Tombstones.cs</c>), and
/// the manager's registration of its low watermark with the store, which it owns.
/// </summary>
/// <remarks>
/// Threading: <see cref="HoldLocked"/> reads the index's generations, its run and the catalog, so
/// its caller holds the manager's lock (the watermark is computed on the store's purge thread under
/// it). Registering and unregistering happen once each, on open and on dispose.
/// </remarks>
internal sealed class TombstoneHold(DocumentStore store, IndexCatalog catalog)
{
    private IDisposable? _registration;

    /// <summary>Registers the manager's low watermark with the store.</summary>
    public void Register(Func<long> lowWatermark) => _registration = store.RegisterTombstoneWatermark(lowWatermark);

    /// <summary>Unregisters it (idempotent; nothing happens when it was never registered).</summary>
    public void Unregister() => _registration?.Dispose();

    /// <summary>The lowest etag <paramref name="managed"/> may still read the change feed from; the caller holds the manager's lock.</summary>
    public long HoldLocked(ManagedIndex managed)
    {
        var running = managed.Rebuild is { IsRunning: true } run ? run : null;
        // A queued run whose bulk phase will start afresh reads nothing before it is admitted, and then
        // a snapshot taken after that: for the watermark it is a run that starts at admission (holding
        // 0 from then, like any new run), so while it waits it holds nothing. A long queue must not
        // stop the purge. A first build in place is the serving generation too: that holds nothing either.
        var waitsAfresh = running is { Phase: RebuildPhase.Queued, StartPhase: RebuildPhase.Bulk } && running.Target.BuildsAfresh;
        var lowest = managed.Active is { } serving ? (waitsAfresh && running!.InPlace ? long.MaxValue : serving.Index.ResumeEtag) : 0;
        if (running is { InPlace: false } && !waitsAfresh)
        {
            lowest = Math.Min(lowest, running.Target.ResumeEtag);
        }

        if (catalog.State.Indexes.GetValueOrDefault(managed.Name)?.Rebuild is { } intent
            && intent.Generation != managed.Generation
            && running?.Generation != intent.Generation)
        {
            lowest = Math.Min(lowest, PersistedResumeEtag(managed.Name, intent.Generation));
        }

        return lowest;
    }

    // A replacement no run holds open: what its last commit records; long.MaxValue (no hold) when it
    // has none (a resume starts it afresh), 0 (hold everything) when it cannot be read.
    private long PersistedResumeEtag(string name, int generation)
    {
        try
        {
            return DocumentIndex.ReadResumeEtag(catalog.GenerationDirectory(name, generation)) ?? long.MaxValue;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or InvalidDataException)
        {
            return 0;
        }
    }
}
