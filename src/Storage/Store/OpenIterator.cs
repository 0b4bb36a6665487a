using RocksDbSharp;

namespace Indexing.Storage;

// A RocksDB iterator that outlives one call (a lazily enumerated scan), registered with its
// store so that disposing the store or the owning snapshot frees it first. Dispose is
// idempotent and may come from the enumerating thread, the snapshot or the store.
internal sealed class OpenIterator : IDisposable
{
    private readonly DocumentStore _store;
    private int _disposed;

    public OpenIterator(DocumentStore store, Iterator native, StoreSnapshot? owner)
    {
        _store = store;
        Native = native;
        Owner = owner;
    }

    public Iterator Native { get; }

    public StoreSnapshot? Owner { get; }

    // Enter before touching Native: fails once the store or the owning snapshot closed (then
    // the iterator may already be freed).
    public bool Enter()
    {
        if (!_store.Gate.TryEnter())
        {
            return false;
        }

        if (Owner is not null && !Owner.Gate.TryEnter())
        {
            _store.Gate.Exit();
            return false;
        }

        if (Volatile.Read(ref _disposed) != 0)
        {
            Exit();
            return false;
        }

        return true;
    }

    public void Exit()
    {
        Owner?.Gate.Exit();
        _store.Gate.Exit();
    }

    // From the enumerating thread: only while the store is open. Once the store is closing, it
    // frees every registered iterator itself (and this one is still registered until freed).
    public void Dispose()
    {
        if (!_store.Gate.TryEnter())
        {
            return;
        }

        try
        {
            Release();
        }
        finally
        {
            _store.Gate.Exit();
        }
    }

    // Frees the native iterator once; the caller is inside the store's gate or has closed it.
    public void Release()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            Native.Dispose();
            _store.IteratorClosed(this);
        }
    }
}
