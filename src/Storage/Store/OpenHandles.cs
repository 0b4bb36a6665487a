using System.Collections.Concurrent;

namespace Indexing.Storage;

/// <summary>
/// The iterators and snapshots a <see cref="DocumentStore"/> has handed out and not yet seen
/// disposed: counted for the status, and freed by the store's Dispose, which may race with scans on
/// other threads (the native objects must go before the database closes).
/// </summary>
/// <remarks>
/// Threading: any thread (concurrent dictionaries, an Interlocked count). <see cref="ReleaseAll"/>
/// runs once the store's gate is closed, so nothing is added meanwhile.
/// </remarks>
internal sealed class OpenHandles
{
    private readonly ConcurrentDictionary<OpenIterator, byte> _iterators = new();
    private readonly ConcurrentDictionary<StoreSnapshot, byte> _snapshots = new();
    private int _openIterators;

    /// <summary>Iterators not yet disposed.</summary>
    public int Iterators => Volatile.Read(ref _openIterators);

    /// <summary>Snapshots not yet disposed.</summary>
    public int Snapshots => _snapshots.Count;

    public void Opened(OpenIterator iterator)
    {
        Interlocked.Increment(ref _openIterators);
        _iterators.TryAdd(iterator, 0);
    }

    public void Closed(OpenIterator iterator)
    {
        _iterators.TryRemove(iterator, out _);
        Interlocked.Decrement(ref _openIterators);
    }

    public void Opened(StoreSnapshot snapshot) => _snapshots.TryAdd(snapshot, 0);

    public void Closed(StoreSnapshot snapshot) => _snapshots.TryRemove(snapshot, out _);

    /// <summary>The open iterators reading <paramref name="owner"/>.</summary>
    public IEnumerable<OpenIterator> IteratorsOf(StoreSnapshot owner) => _iterators.Keys.Where(i => ReferenceEquals(i.Owner, owner));

    /// <summary>Frees every iterator, then every snapshot, still open (the store is closing: nothing enters any more).</summary>
    public void ReleaseAll()
    {
        foreach (var iterator in _iterators.Keys)
        {
            iterator.Release();
        }

        foreach (var snapshot in _snapshots.Keys)
        {
            snapshot.ReleaseNative();
        }
    }
}
