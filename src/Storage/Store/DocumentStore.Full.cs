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
internal sealed partial class DocumentStore
{
    // RocksDB's wording of ENOSPC: its IOStatus::NoSpace subcode text, and strerror(ENOSPC) after it.
    private const string NoSpaceText = "No space left on device";

    // RocksDB's wording of Status::Incomplete, what a write with no_slowdown gets during a write stall.
    private const string StallText = "Result incomplete";

    // An empty batch: RocksDB answers it with its background error while writes are stopped, and
    // stores nothing otherwise (no key, no sequence number; at most an empty record in the log, not
    // synced). Not without the log: a write without it makes RocksDB flush every memtable at close.
    // No slowdown: during a write stall it returns at once (incomplete) instead of holding the call.
    private readonly WriteOptions _probeWrite = NoSlowdown(new WriteOptions().SetSync(false));

    private readonly Lock _refusalLock = new();
    private DateTimeOffset? _refusedSince;
    private string? _refusal;

    /// <summary>Free bytes RocksDB waits for, after the store's volume filled, before it resumes writes by itself (64 MiB: the largest memtable).</summary>
    public static long ResumeFreeBytes => StoreTuning.LargestWriteBufferBytes;

    /// <summary>
    /// Whether the store accepts writes now: asks RocksDB with an empty write that touches nothing, so
    /// it also sees a refusal no write has met yet (a flush that found the volume full) and a resume
    /// that happened since the last refused write.
    /// </summary>
    public StoreWriteStatus GetWriteStatus()
    {
        _gate.Enter(this);
        try
        {
            string? error = null;
            using (var probe = new WriteBatch())
            {
                try
                {
                    _db.Write(probe, _probeWrite);
                }
                catch (RocksDbException e) when (!e.Message.StartsWith(StallText, StringComparison.Ordinal))
                {
                    // A stall is not a refusal: writes wait, then go in.
                    error = e.Message;
                }
            }

            lock (_refusalLock)
            {
                if (error is null)
                {
                    _refusedSince = null;
                    _refusal = null;
                    return new StoreWriteStatus(true, false, null, null, AvailableBytes(), ResumeFreeBytes);
                }

                _refusedSince ??= DateTimeOffset.UtcNow;
                _refusal = error;
                return new StoreWriteStatus(false, IsNoSpace(error), _refusedSince, error, AvailableBytes(), ResumeFreeBytes);
            }
        }
        finally
        {
            _gate.Exit();
        }
    }

    private static WriteOptions NoSlowdown(WriteOptions options)
    {
        // The binding's WriteOptions has no setter for it; the C API's is in Native.
        Native.Instance.rocksdb_writeoptions_set_no_slowdown(options.Handle, 1);
        return options;
    }

    private static bool IsNoSpace(string rocksDbMessage) => rocksDbMessage.Contains(NoSpaceText, StringComparison.Ordinal);

    // The one wording of a failed write: what was written, the store, RocksDB's message, what became
    // of it. A full volume gets its own exception, which says what to do.
    private DocumentStoreException WriteFailed(string writing, string outcome, RocksDbException e)
    {
        lock (_refusalLock)
        {
            _refusedSince ??= DateTimeOffset.UtcNow;
            _refusal = e.Message;
        }

        if (!IsNoSpace(e.Message))
        {
            return new DocumentStoreException($"{writing} failed in RocksDB at {MessageText.Quote(Path)}: {e.Message}; {outcome}.", e);
        }

        var available = AvailableBytes();
        var free = available is { } bytes ? $"{ByteSize.Format(bytes)} free" : "its free space unknown";
        return new StoreFullException(
            $"the store's volume is full: {writing} found no space left on the device holding {MessageText.QuotePath(Path)} ({free}); {outcome}. " +
            $"Every write is refused until the volume has {ByteSize.Format(ResumeFreeBytes)} free again, then the store resumes writes by itself " +
            "within about 5 s (no restart needed); reads and queries go on meanwhile. Free space on that volume or grow it. " +
            $"RocksDB: {e.Message}",
            Path,
            available,
            ResumeFreeBytes,
            e);
    }

    // After a write that succeeded: a refusal seen before is over.
    private void WriteSucceeded()
    {
        if (Volatile.Read(ref _refusal) is null)
        {
            return;
        }

        lock (_refusalLock)
        {
            _refusedSince = null;
            _refusal = null;
        }
    }

    private long? AvailableBytes()
    {
        try
        {
            return new DriveInfo(Path).AvailableFreeSpace;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return null;
        }
    }
}
