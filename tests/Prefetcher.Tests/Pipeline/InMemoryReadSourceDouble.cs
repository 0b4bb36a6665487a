using System.Diagnostics;
using Indexing.Storage;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// TEST DOUBLE for <see cref="IDocumentReadSource"/>: a sorted in-memory list of (id, body) standing
/// in for the RocksDB snapshot source where a test must control read timing and failures. Like a snapshot read it
/// returns fresh body buffers (copies), reads a task as a key range (FirstId..LastId), and observes
/// the cancellation token between documents and during its optional per-read delay.
/// It counts what the tests check: reads open now and at most, read calls, bytes read, disposals,
/// and reads attempted after disposal.
/// </summary>
internal sealed class InMemoryReadSourceDouble : IDocumentReadSource
{
    private readonly string[] _ids;
    private readonly byte[][] _bodies;
    private int _openReads;
    private int _maxOpenReads;
    private int _readCalls;
    private int _disposeCount;
    private int _readsAfterDispose;
    private long _bytesRead;
    private long _firstDisposedAt;

    public InMemoryReadSourceDouble(IReadOnlyList<(string Id, byte[] Body)> sortedDocuments)
    {
        _ids = new string[sortedDocuments.Count];
        _bodies = new byte[sortedDocuments.Count][];
        for (var i = 0; i < sortedDocuments.Count; i++)
        {
            (_ids[i], _bodies[i]) = sortedDocuments[i];
            if (i > 0 && DocumentIds.CompareKeyOrder(_ids[i - 1], _ids[i]) >= 0)
            {
                throw new ArgumentException($"Documents must be sorted by key: '{_ids[i]}' follows '{_ids[i - 1]}'.", nameof(sortedDocuments));
            }
        }
    }

    /// <summary>Added to every read (observing the token), to make reads take time without the disk model.</summary>
    public TimeSpan ReadDelay { get; init; }

    /// <summary>The first this many read calls skip <see cref="ReadDelay"/> (so a run can start, then stall).</summary>
    public int UndelayedReads { get; init; }

    /// <summary>Returns the exception a read of this task throws (after its delay), or null to read normally.</summary>
    public Func<ReadTask, Exception?>? FailWhen { get; init; }

    /// <summary>The metadata scan throws this after yielding <see cref="ScanFailsAfter"/> documents.</summary>
    public Exception? ScanFailure { get; init; }

    public int ScanFailsAfter { get; init; }

    public int Count => _ids.Length;

    public long TotalBytes => _bodies.Sum(body => (long)body.Length);

    public int OpenReads => Volatile.Read(ref _openReads);

    /// <summary>Body bytes the reads have delivered so far.</summary>
    public long BytesRead => Interlocked.Read(ref _bytesRead);

    public int MaxOpenReads => Volatile.Read(ref _maxOpenReads);

    public int ReadCalls => Volatile.Read(ref _readCalls);

    /// <summary>Dispose calls (the owner must make exactly one).</summary>
    public int DisposeCount => Volatile.Read(ref _disposeCount);

    /// <summary>
    /// <see cref="Stopwatch"/> timestamp of the first <see cref="Dispose"/>, or 0. The prefetchers release
    /// the source on the last reader's own thread, so this times a shutdown without the thread pool.
    /// </summary>
    public long FirstDisposedAt => Interlocked.Read(ref _firstDisposedAt);

    /// <summary>1 once released, however often Dispose was called (a real snapshot releases once).</summary>
    public int ReleaseCount => Math.Min(1, DisposeCount);

    public int ReadsAfterDispose => Volatile.Read(ref _readsAfterDispose);

    public long SnapshotEtag => _ids.Length == 0 ? 0 : EtagOf(_ids.Length - 1);

    /// <summary>The scan starts strictly after this id, as a resumed run's would.</summary>
    public string? StartAfterId { get; init; }

    public byte[] BodyOf(string id) => _bodies[IndexOf(id)];

    public void ResetMaxOpenReads() => Volatile.Write(ref _maxOpenReads, OpenReads);

    public IEnumerable<DocumentMetadata> ScanMetadata(CancellationToken cancellationToken)
    {
        var first = StartAfterId is null ? 0 : FirstAfter(StartAfterId);
        for (var i = first; i < _ids.Length; i++)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (ScanFailure is not null && i - first == ScanFailsAfter)
            {
                throw ScanFailure;
            }

            yield return new DocumentMetadata(_ids[i], EtagOf(i), _bodies[i].Length);
        }
    }

    public void Read(ReadTask task, List<PrefetchedDocument> destination, CancellationToken cancellationToken)
    {
        var call = Interlocked.Increment(ref _readCalls);
        if (DisposeCount > 0)
        {
            Interlocked.Increment(ref _readsAfterDispose);
        }

        var open = Interlocked.Increment(ref _openReads);
        UpdateMax(open);
        try
        {
            if (call > UndelayedReads && ReadDelay > TimeSpan.Zero && cancellationToken.WaitHandle.WaitOne(ReadDelay))
            {
                cancellationToken.ThrowIfCancellationRequested();
            }

            if (FailWhen?.Invoke(task) is { } failure)
            {
                throw failure;
            }

            for (var i = IndexOf(task.FirstId); i < _ids.Length && DocumentIds.CompareKeyOrder(_ids[i], task.LastId) <= 0; i++)
            {
                cancellationToken.ThrowIfCancellationRequested();
                destination.Add(new PrefetchedDocument(_ids[i], EtagOf(i), _bodies[i].AsSpan().ToArray()));
                Interlocked.Add(ref _bytesRead, _bodies[i].Length);
            }
        }
        finally
        {
            Interlocked.Decrement(ref _openReads);
        }
    }

    public void Dispose()
    {
        Interlocked.CompareExchange(ref _firstDisposedAt, Stopwatch.GetTimestamp(), 0);
        Interlocked.Increment(ref _disposeCount);
    }

    /// <summary>The etag the double gives the document at <paramref name="index"/> (not its position, so a mix-up shows).</summary>
    public static long EtagOf(int index) => 1000 + (3L * index);

    private static readonly Comparer<string> _keyOrder = Comparer<string>.Create(DocumentIds.CompareKeyOrder);

    private int FirstAfter(string id)
    {
        var index = Array.BinarySearch(_ids, id, _keyOrder);
        return index >= 0 ? index + 1 : ~index;
    }

    private int IndexOf(string id)
    {
        var index = Array.BinarySearch(_ids, id, _keyOrder);
        return index >= 0 ? index : throw new KeyNotFoundException($"No document '{id}' in the test double.");
    }

    private void UpdateMax(int open)
    {
        var max = Volatile.Read(ref _maxOpenReads);
        while (open > max && Interlocked.CompareExchange(ref _maxOpenReads, open, max) is var seen && seen != max)
        {
            max = seen;
        }
    }
}
