using System.Collections.Concurrent;
using System.Runtime.InteropServices;

using RocksDbSharp;

namespace Indexing.Storage;

/// <summary>
/// A consistent, read-only view of the store at one moment, with its etag high-water mark: every
/// change after <see cref="Etag"/> is in <see cref="DocumentStore.ReadChanges"/>. Rebuilds read
/// through it so that the documents they index and the change feed they follow agree.
/// </summary>
/// <remarks>
/// Reads may run on many threads at once. Read-once access: no read fills the block cache. The
/// metadata scan reads ahead 2 MiB at a time; range reads take RocksDB's own readahead, which
/// starts at a block and grows while reads stay sequential. A fixed readahead is read in every
/// file a range touches, one per level, and past the range's end, so a short range read many times
/// its bytes from the device (benchmarks/results/README.md, "Other figures"). A range read is bounded
/// above by its last id, so that readahead also stops at the range's end. The scan's and point reads'
/// ReadOptions are created once per snapshot, a range read's once per range read running at once,
/// then reused (RocksDbSharp frees them in a finalizer; there is no Dispose). Dispose waits for reads in
/// flight, frees its scans' iterators, then releases the RocksDB snapshot; it is idempotent, and
/// disposing the store releases every snapshot still open.
/// </remarks>
internal sealed class StoreSnapshot : IDisposable
{
    private readonly DocumentStore _store;
    private readonly Snapshot _native;
    private readonly ReadOptions _scanRead;
    private readonly ReadOptions _read;

    // Range reads' options, each bounded above by its range, reused: at most one per range read
    // running at once (the prefetcher's readers), created on first need.
    private readonly ConcurrentBag<ReadOptions> _rangeReads = [];
    private int _released;

    internal StoreSnapshot(DocumentStore store, Snapshot native, long etag)
    {
        _store = store;
        _native = native;
        Etag = etag;
        _scanRead = new ReadOptions().SetSnapshot(native).SetFillCache(false).SetReadaheadSize(DocumentStore.ScanReadaheadBytes);
        _read = new ReadOptions().SetSnapshot(native).SetFillCache(false);
    }

    /// <summary>The etag of the latest write the snapshot holds (0 for an empty store).</summary>
    public long Etag { get; }

    internal NativeGate Gate { get; } = new();

    /// <summary>
    /// Live documents' metadata in key order, of one collection (null: all), strictly after
    /// <paramref name="startAfterId"/> when given (a resumed scan). Lazily enumerated; the token is
    /// observed between rows.
    /// </summary>
    public IEnumerable<DocumentMetadata> ScanMetadata(string? collection = null, string? startAfterId = null, CancellationToken cancellationToken = default)
    {
        Enter();
        try
        {
            return _store.ScanMeta(_scanRead, collection, startAfterId, this, cancellationToken);
        }
        finally
        {
            Exit();
        }
    }

    /// <summary>
    /// The change feed as the snapshot holds it: each document's latest change up to <see cref="Etag"/>
    /// and after <paramref name="afterEtag"/>, in etag order (see <see cref="DocumentStore.ReadChanges"/>).
    /// Later writes and tombstone purges cannot hide an entry from it. Lazily enumerated.
    /// </summary>
    public IEnumerable<ChangeEntry> ReadChanges(long afterEtag)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(afterEtag);
        Enter();
        try
        {
            var iterator = _store.OpenIterator(_store.ChangesHandle, _read, this);
            iterator.Native.Seek(StoredFormats.EtagKey(afterEtag + 1));
            return _store.ReadChangesFrom(iterator, int.MaxValue);
        }
        finally
        {
            Exit();
        }
    }

    /// <summary>
    /// Appends the bodies of the live documents with <paramref name="firstId"/> &lt;= id &lt;=
    /// <paramref name="lastId"/> (key order) to <paramref name="destination"/>, in key order: one
    /// iterator, which stops on <paramref name="lastId"/> or on the first key past it.
    /// </summary>
    public void ReadRange(string firstId, string lastId, List<DocumentBody> destination, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(destination);
        var first = DocumentIds.ToKey(firstId);
        var last = DocumentIds.ToKey(lastId);
        if (first.AsSpan().SequenceCompareTo(last) > 0)
        {
            throw new ArgumentException(
                $"range {MessageText.Quote(firstId)}..{MessageText.Quote(lastId)} is empty: the first id sorts after the last in key order. Pass them in key order.",
                nameof(lastId));
        }

        Enter();
        try
        {
            // Bounded just past the last id: RocksDB's readahead then stops at the range's end
            // instead of reading up to 256 KiB past it (a third of what the readahead read, and
            // 0.2x the store over a rebuild), and the iterator never loads the next document.
            if (!_rangeReads.TryTake(out var rangeRead))
            {
                rangeRead = new ReadOptions().SetSnapshot(_native).SetFillCache(false);
            }

            rangeRead.SetIterateUpperBound([.. last, 0]);
            var iterator = _store.OpenIterator(_store.DocsHandle, rangeRead, owner: null);
            try
            {
                for (iterator.Native.Seek(first); iterator.Native.Valid(); iterator.Native.Next())
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    var key = iterator.Native.GetKeySpan();
                    var order = key.SequenceCompareTo(last);
                    if (order > 0)
                    {
                        break;
                    }

                    destination.Add(new DocumentBody(DocumentIds.FromKey(key), CopyOut(iterator.Native.GetValueSpan())));
                    if (order == 0)
                    {
                        // Stepping past the last id would position the iterator on the next key,
                        // which loads that document's value, and the next document may be a giant
                        // (its blob file read, 20 MB, for nothing).
                        break;
                    }
                }

                _store.ThrowIfIteratorFailed(iterator.Native, $"reading documents {MessageText.Quote(firstId)}..{MessageText.Quote(lastId)}");
            }
            finally
            {
                iterator.Release();
                _rangeReads.Add(rangeRead);
            }
        }
        catch (RocksDbException e)
        {
            throw _store.ReadFailed($"reading documents {MessageText.Quote(firstId)}..{MessageText.Quote(lastId)}", e.Message, e);
        }
        finally
        {
            Exit();
        }
    }

    /// <summary>
    /// Appends the bodies of <paramref name="sortedIds"/> to <paramref name="destination"/> in the
    /// order given (the prefetcher passes key order; any order reads the same), read by one
    /// MultiGet. An id absent under the snapshot throws <see cref="InvalidOperationException"/>
    /// naming it: the ids are expected to come from this snapshot's metadata scan. A failed read
    /// throws <see cref="DocumentStoreException"/>; either way nothing is appended.
    /// </summary>
    /// <remarks>
    /// One batched MultiGet into pinned slices, each copied once into an uninitialized array, as
    /// <see cref="Get"/> does: RocksDbSharp's MultiGet goes through rocksdb_multi_get_cf, which
    /// mallocs a copy of every value that is then copied again into a zeroed managed array. Reading
    /// 256 MB of growing documents on the modelled slow disk, that zeroing and the extra copy were
    /// about two fifths of the readers' profile samples in MultiGet (most of the zeroing's cost then
    /// moved to the page faults of the one copy: reading's total processor time did not measurably fall).
    /// </remarks>
    public void MultiGet(IReadOnlyList<string> sortedIds, List<DocumentBody> destination)
    {
        ArgumentNullException.ThrowIfNull(sortedIds);
        ArgumentNullException.ThrowIfNull(destination);
        var count = sortedIds.Count;
        if (count == 0)
        {
            return;
        }

        // The keys side by side in one array, pinned once for the call.
        var keys = new byte[count][];
        var keySizes = new UIntPtr[count];
        var total = 0;
        for (var i = 0; i < count; i++)
        {
            keys[i] = DocumentIds.ToKey(sortedIds[i]);
            keySizes[i] = (UIntPtr)keys[i].Length;
            total += keys[i].Length;
        }

        var keyBytes = new byte[total];
        var keyOffsets = new int[count];
        for (int i = 0, used = 0; i < count; used += keys[i].Length, i++)
        {
            keyOffsets[i] = used;
            keys[i].CopyTo(keyBytes, used);
        }

        var slices = new IntPtr[count];
        var errors = new IntPtr[count];
        var bodies = new byte[count][];
        var native = Native.Instance;
        GCHandle keysPin = default, slicesPin = default;
        Enter();
        try
        {
            keysPin = GCHandle.Alloc(keyBytes, GCHandleType.Pinned);
            slicesPin = GCHandle.Alloc(slices, GCHandleType.Pinned);
            var keyPointers = new IntPtr[count];
            var keysAddress = keysPin.AddrOfPinnedObject();
            for (var i = 0; i < count; i++)
            {
                keyPointers[i] = keysAddress + keyOffsets[i];
            }

            // sorted_input false: RocksDB sorts 32 keys for next to nothing, and a caller's order
            // that differs from the comparator's then costs time, not wrong answers.
            native.rocksdb_batched_multi_get_cf(
                _store.Db.Handle, _read.Handle, _store.DocsHandle.Handle, (UIntPtr)count, keyPointers, keySizes, slicesPin.AddrOfPinnedObject(), errors, 0);
            for (var i = 0; i < count; i++)
            {
                if (errors[i] != IntPtr.Zero)
                {
                    throw _store.ReadFailed(
                        $"reading {count} document(s) from {MessageText.Quote(sortedIds[0])}",
                        $"{Marshal.PtrToStringUTF8(errors[i])} (document {MessageText.Quote(sortedIds[i])})");
                }

                if (slices[i] == IntPtr.Zero)
                {
                    throw new InvalidOperationException(
                        $"document {MessageText.Quote(sortedIds[i])} does not exist in the snapshot at etag {Etag}; read only ids from this snapshot's metadata scan.");
                }

                var value = native.rocksdb_pinnableslice_value(slices[i], out var length);
                bodies[i] = CopyOut(value, length);
            }
        }
        finally
        {
            for (var i = 0; i < count; i++)
            {
                if (slices[i] != IntPtr.Zero)
                {
                    native.rocksdb_pinnableslice_destroy(slices[i]);
                }

                if (errors[i] != IntPtr.Zero)
                {
                    native.rocksdb_free(errors[i]);
                }
            }

            if (slicesPin.IsAllocated)
            {
                slicesPin.Free();
            }

            if (keysPin.IsAllocated)
            {
                keysPin.Free();
            }

            Exit();
        }

        for (var i = 0; i < count; i++)
        {
            destination.Add(new DocumentBody(sortedIds[i], bodies[i]));
        }
    }

    /// <summary>The body of <paramref name="id"/> under the snapshot, or null. Not a foreground read.</summary>
    public byte[]? Get(string id)
    {
        var key = DocumentIds.ToKey(id);
        Enter();
        try
        {
            return ReadPinned(key);
        }
        catch (RocksDbException e)
        {
            throw _store.ReadFailed($"reading document {MessageText.Quote(id)}", e.Message, e);
        }
        finally
        {
            Exit();
        }
    }

    // The value straight from RocksDB's pinned slice into an uninitialized array: RocksDbSharp's
    // Get goes through rocksdb_get_cf, which mallocs a copy of the value that is then copied again
    // into a zeroed managed array. For a 20 MiB giant that is two extra passes over its bytes and a
    // fresh 20 MiB the kernel faults in and clears: a quarter of the processor time of reading
    // rare giants alone (2.72 s -> 2.07 s for 2 GB).
    private byte[]? ReadPinned(byte[] key)
    {
        var native = Native.Instance;
        var slice = native.rocksdb_get_pinned_cf(_store.Db.Handle, _read.Handle, _store.DocsHandle.Handle, key, (UIntPtr)key.Length, out var error);
        if (error != IntPtr.Zero)
        {
            throw new RocksDbException(error);
        }

        if (slice == IntPtr.Zero)
        {
            return null; // not found
        }

        try
        {
            var value = native.rocksdb_pinnableslice_value(slice, out var length);
            return CopyOut(value, length);
        }
        finally
        {
            native.rocksdb_pinnableslice_destroy(slice);
        }
    }

    // A value RocksDB holds (pinned, or under an iterator) copied once into an uninitialized array:
    // the copy overwrites every byte, so zeroing it first is a wasted pass (and, for a giant, fresh
    // pages cleared twice).
    private static byte[] CopyOut(IntPtr value, UIntPtr length)
    {
        var body = GC.AllocateUninitializedArray<byte>(checked((int)length));
        if (body.Length > 0)
        {
            Marshal.Copy(value, body, 0, body.Length);
        }

        return body;
    }

    private static byte[] CopyOut(ReadOnlySpan<byte> value)
    {
        var body = GC.AllocateUninitializedArray<byte>(value.Length);
        value.CopyTo(body);
        return body;
    }

    /// <summary>Waits for reads in flight, frees open scans and releases the snapshot. Idempotent.</summary>
    public void Dispose()
    {
        if (!Gate.Close())
        {
            return;
        }

        if (!_store.Gate.TryEnter())
        {
            return; // the store is closing and releases every snapshot itself
        }

        try
        {
            ReleaseNative();
        }
        finally
        {
            _store.Gate.Exit();
        }
    }

    // Frees this snapshot's scan iterators, then the RocksDB snapshot, once. The caller is inside
    // the store's gate, or the store is closing (its gate closed).
    internal void ReleaseNative()
    {
        Gate.Close();
        if (Interlocked.Exchange(ref _released, 1) != 0)
        {
            return;
        }

        foreach (var iterator in _store.IteratorsOf(this))
        {
            iterator.Release();
        }

        _native.Dispose();
        _store.SnapshotClosed(this);
    }

    private void Enter()
    {
        _store.Gate.Enter(_store);
        if (!Gate.TryEnter())
        {
            _store.Gate.Exit();
            throw new ObjectDisposedException(nameof(StoreSnapshot), $"the snapshot at etag {Etag} was disposed; take a new snapshot to read.");
        }
    }

    private void Exit()
    {
        Gate.Exit();
        _store.Gate.Exit();
    }
}
