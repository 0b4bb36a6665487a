namespace Indexing.Storage;

// Tombstone cleanup, as the store's callers see it: the low watermarks they register and the purge
// rounds. The counts and the rounds are TombstonePurger's; the registrations and the background
// thread TombstonePurgeThread's.
internal sealed partial class DocumentStore
{
    /// <summary>Most tombstones one purge batch removes, i.e. per hold of the writer lock.</summary>
    internal const int PurgeBatchTombstones = TombstonePurger.BatchTombstones;

    /// <summary>Most change entries one purge batch looks at, so that a batch over a stretch of live entries ends too.</summary>
    internal const int PurgeBatchScanEntries = TombstonePurger.BatchScanEntries;

    /// <summary>Fewest tombstones purged since the last compaction of their key range before the next one.</summary>
    internal const long PurgeCompactionFloor = TombstonePurger.CompactionFloor;

    /// <summary>The tombstone counts and the last purge rounds in detail (the lock holds' percentiles); <see cref="GetStatus"/> gives their summary.</summary>
    public TombstoneStatus GetTombstoneStatus() => _tombstones.Status();

    /// <summary>Test hook: called after each purge batch is written, with its number in the round (1, 2, ...); it may throw or block.</summary>
    internal Action<int>? PurgeBatchWritten
    {
        get => _tombstones.BatchWritten;
        set => _tombstones.BatchWritten = value;
    }

    /// <summary>Test hook: called between a purge batch's scan and its taking the writer lock (a concurrent write goes here).</summary>
    internal Action? PurgeBeforeLock
    {
        get => _tombstones.BeforeLock;
        set => _tombstones.BeforeLock = value;
    }

    /// <summary>
    /// Registers a low watermark for tombstone cleanup: <paramref name="lowWatermark"/> returns an
    /// etag at or below which no reader will ever read the change feed again (every index has
    /// durably applied those changes, and no rebuild will catch up from below it). Tombstones at or
    /// below the lowest registered watermark are purged in the background, every
    /// <see cref="StoreOptions.TombstonePurgeInterval"/>. Without a registration nothing is purged.
    /// Dispose the result to unregister; it may be called on the purge thread at any time until then,
    /// never under a lock of the store, and must not block for long.
    /// </summary>
    public IDisposable RegisterTombstoneWatermark(Func<long> lowWatermark)
    {
        ArgumentNullException.ThrowIfNull(lowWatermark);
        ObjectDisposedException.ThrowIf(_gate.IsClosed, this);
        return _purgeThread.Register(lowWatermark);
    }

    /// <summary>
    /// Runs one purge round now, on the caller's thread (the background purger runs the same): every
    /// tombstone at or below the registered low watermark goes, in batches. Returns what it did.
    /// </summary>
    internal PurgeRound PurgeTombstones(CancellationToken cancellationToken = default) =>
        _tombstones.Purge(_purgeThread.ReadWatermark, cancellationToken);

    /// <summary>Counts the tombstone rows of meta by a full scan (the open of an older store, and tests checking the counter).</summary>
    internal long CountTombstoneRows() => _tombstones.CountTombstoneRows();
}
