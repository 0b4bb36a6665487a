using RocksDbSharp;

namespace Indexing.Storage;

// A full volume, as the store's callers see it: the write status, and the exception a refused
// write throws. Telling a full volume apart and learning that writes resume is WriteRefusal's.
internal sealed partial class DocumentStore
{
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
            return _refusal.Probe();
        }
        finally
        {
            _gate.Exit();
        }
    }

    private static bool IsNoSpace(string rocksDbMessage) => WriteRefusal.IsNoSpace(rocksDbMessage);

    // The one wording of a failed write (WriteRefusal.Failed); the purger's batches use it too.
    internal DocumentStoreException WriteFailed(string writing, string outcome, RocksDbException e) => _refusal.Failed(writing, outcome, e);
}
