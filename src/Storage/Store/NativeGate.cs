namespace Indexing.Storage;

// Lets native calls run concurrently and lets Close wait for the ones in flight, so a handle is
// never freed under a running call. Enter/Exit is two interlocked operations; Close is rare.
// A caller that cannot enter gets ObjectDisposedException (from Enter) or false (TryEnter).
internal sealed class NativeGate
{
    private const int ClosedBit = 1 << 30;
    private int _state;

    public bool IsClosed => (Volatile.Read(ref _state) & ClosedBit) != 0;

    public bool TryEnter()
    {
        if ((Interlocked.Increment(ref _state) & ClosedBit) != 0)
        {
            Interlocked.Decrement(ref _state);
            return false;
        }

        return true;
    }

    public void Enter(object owner)
    {
        if (!TryEnter())
        {
            throw new ObjectDisposedException(owner.GetType().Name, $"the {owner.GetType().Name} was disposed; open it again to read or write.");
        }
    }

    public void Exit() => Interlocked.Decrement(ref _state);

    // Returns false if it was already closed. Waits for every call in flight (a RocksDB call
    // cannot be interrupted, so this is as long as the longest running Get or MultiGet).
    public bool Close()
    {
        int state;
        do
        {
            state = Volatile.Read(ref _state);
            if ((state & ClosedBit) != 0)
            {
                return false;
            }
        }
        while (Interlocked.CompareExchange(ref _state, state | ClosedBit, state) != state);

        var spin = new SpinWait();
        while ((Volatile.Read(ref _state) & ~ClosedBit) != 0)
        {
            spin.SpinOnce(sleep1Threshold: 20);
        }

        return true;
    }
}
