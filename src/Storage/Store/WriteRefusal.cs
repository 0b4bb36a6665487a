using RocksDbSharp;

namespace Indexing.Storage;

// A full volume. When a write finds no space (ENOSPC on the write-ahead log, or a flush that cannot
// write its file), RocksDB records a background error and refuses every later write with it, while
// reads go on. It resumes by itself: its SstFileManager (one per database, made at open) checks the
// volume's free space every 5 s and clears the error (flushing the memtables to a new log) once
// StoreTuning.LargestWriteBufferBytes are free. The C API has no rocksdb_resume, and a reopen would
// have to release every snapshot and iterator the rebuilds hold; so the store does not resume
// RocksDB, it only tells a full volume apart (StoreFullException, the write status) and learns
// that writes are accepted again from the next write or status probe that succeeds.

/// <summary>
/// Whether a <see cref="DocumentStore"/> accepts writes: the refusal RocksDB last answered with and
/// since when, the probe that asks RocksDB now, and the wording of a failed write (a full volume gets
/// its own exception).
/// </summary>
/// <remarks>
/// Threading: any thread; the refusal is changed under a lock of its own, never under the store's
/// write lock (a write that fails or succeeds reports here after its batch).
/// </remarks>
internal sealed class WriteRefusal
{
    // RocksDB's wording of ENOSPC: its IOStatus::NoSpace subcode text, and strerror(ENOSPC) after it.
    private const string NoSpaceText = "No space left on device";

    // RocksDB's wording of Status::Incomplete, what a write with no_slowdown gets during a write stall.
    private const string StallText = "Result incomplete";

    private readonly DocumentStore _store;

    // An empty batch: RocksDB answers it with its background error while writes are stopped, and
    // stores nothing otherwise (no key, no sequence number; at most an empty record in the log, not
    // synced). Not without the log: a write without it makes RocksDB flush every memtable at close.
    // No slowdown: during a write stall it returns at once (incomplete) instead of holding the call.
    private readonly WriteOptions _probeWrite = NoSlowdown(new WriteOptions().SetSync(false));

    private readonly Lock _lock = new();
    private DateTimeOffset? _refusedSince;
    private string? _refusal;

    public WriteRefusal(DocumentStore store) => _store = store;

    /// <summary>Whether a RocksDB message says the volume is full.</summary>
    public static bool IsNoSpace(string rocksDbMessage) => rocksDbMessage.Contains(NoSpaceText, StringComparison.Ordinal);

    /// <summary>Asks RocksDB with an empty write; the caller is inside the store's gate.</summary>
    public StoreWriteStatus Probe()
    {
        string? error = null;
        using (var probe = new WriteBatch())
        {
            try
            {
                _store.Db.Write(probe, _probeWrite);
            }
            catch (RocksDbException e) when (!e.Message.StartsWith(StallText, StringComparison.Ordinal))
            {
                // A stall is not a refusal: writes wait, then go in.
                error = e.Message;
            }
        }

        lock (_lock)
        {
            if (error is null)
            {
                _refusedSince = null;
                _refusal = null;
                return new StoreWriteStatus(true, false, null, null, AvailableBytes(), DocumentStore.ResumeFreeBytes);
            }

            _refusedSince ??= DateTimeOffset.UtcNow;
            _refusal = error;
            return new StoreWriteStatus(false, IsNoSpace(error), _refusedSince, error, AvailableBytes(), DocumentStore.ResumeFreeBytes);
        }
    }

    /// <summary>
    /// The one wording of a failed write: what was written, the store, RocksDB's message, what became
    /// of it. A full volume gets its own exception, which says what to do.
    /// </summary>
    public DocumentStoreException Failed(string writing, string outcome, RocksDbException e)
    {
        lock (_lock)
        {
            _refusedSince ??= DateTimeOffset.UtcNow;
            _refusal = e.Message;
        }

        var path = _store.Path;
        if (!IsNoSpace(e.Message))
        {
            return new DocumentStoreException($"{writing} failed in RocksDB at {MessageText.Quote(path)}: {e.Message}; {outcome}.", e);
        }

        var available = AvailableBytes();
        var free = available is { } bytes ? $"{ByteSize.Format(bytes)} free" : "its free space unknown";
        return new StoreFullException(
            $"the store's volume is full: {writing} found no space left on the device holding {MessageText.QuotePath(path)} ({free}); {outcome}. " +
            $"Every write is refused until the volume has {ByteSize.Format(DocumentStore.ResumeFreeBytes)} free again, then the store resumes writes by itself " +
            "within about 5 s (no restart needed); reads and queries go on meanwhile. Free space on that volume or grow it. " +
            $"RocksDB: {e.Message}",
            path,
            available,
            DocumentStore.ResumeFreeBytes,
            e);
    }

    /// <summary>After a write that succeeded: a refusal seen before is over.</summary>
    public void Succeeded()
    {
        if (Volatile.Read(ref _refusal) is null)
        {
            return;
        }

        lock (_lock)
        {
            _refusedSince = null;
            _refusal = null;
        }
    }

    private static WriteOptions NoSlowdown(WriteOptions options)
    {
        // The binding's WriteOptions has no setter for it; the C API's is in Native.
        Native.Instance.rocksdb_writeoptions_set_no_slowdown(options.Handle, 1);
        return options;
    }

    private long? AvailableBytes()
    {
        try
        {
            return new DriveInfo(_store.Path).AvailableFreeSpace;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return null;
        }
    }
}
