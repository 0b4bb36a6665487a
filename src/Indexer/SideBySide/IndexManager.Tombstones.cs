namespace Indexing.Indexer;

// The store's tombstone low watermark, which the manager hands it (the store knows nothing of
// indexes): the lowest etag from which any index or rebuild could still read the change feed. A
// tombstone at or below it has been applied, durably, by every reader that will ever need it.
//
// Each index holds it at its serving generation's ResumeEtag: its last commit's etag, so an index
// that is behind holds it there whatever the reason (following slowly, paused, stopped, in Error);
// a generation that could not be opened has a checkpoint nobody knows, so it holds everything (0).
// A running rebuild holds it at its replacement's ResumeEtag: the bulk phase's snapshot etag S
// once the build's first commit recorded it (0 before that), then the replacement's committed
// etag. A queued rebuild whose bulk phase will start afresh holds nothing until it is admitted (then
// 0, as any run just started; a first build in place likewise for its serving generation); a queued
// one that resumes holds what its replacement's commit records. A rebuild intent in the catalog that no run in this process carries holds it at the
// ResumeEtag its replacement's last commit records (its S, if the bulk phase had committed), since
// the next open resumes it from there. A removed index, a retired generation and a finished
// rebuild hold nothing. With no index at all nothing is held.
//
// Why a value read earlier stays safe to purge below: every hold only moves up, except for what is
// created later, and that reads a snapshot taken later, so starts above anything already purged. The
// one exception is a rebuild that joins a shared pass: it reads the pass's earlier snapshot S, but
// only while a reader of that pass still holds the watermark at or below S (SharedPasses.cs).
internal sealed partial class IndexManager
{
    // Called on the store's purge thread; takes _lock for a consistent view of indexes, runs and
    // catalog (it is never held long: no indexing, store reads or waits happen under it).
    internal long TombstoneWatermark()
    {
        if (Volatile.Read(ref _disposed) != 0)
        {
            return 0; // closing: hold everything; what was read before stays valid
        }

        lock (_lock)
        {
            var lowest = long.MaxValue;
            foreach (var managed in _indexes.Values)
            {
                lowest = Math.Min(lowest, _tombstoneHold.HoldLocked(managed));
            }

            return lowest;
        }
    }

    // Registered once the indexes are open (and every persisted rebuild resumed), so the first
    // watermark the store reads already counts all of them.
    private void RegisterTombstoneWatermark() => _tombstoneHold.Register(TombstoneWatermark);

    private void UnregisterTombstoneWatermark() => _tombstoneHold.Unregister();
}
