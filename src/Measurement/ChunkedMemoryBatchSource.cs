using System.Diagnostics;
using System.Diagnostics.CodeAnalysis;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Measurement;

/// <summary>
/// The IndexOnly bound's input when the collection is larger than the workload's in-memory limit:
/// every document of one collection, in key order, as of one snapshot taken when the source is
/// created, held in memory one chunk at a time.
/// <para>
/// A chunk is a run of consecutive documents whose bodies sum to at most the limit; a document
/// larger than the limit is a chunk of its own. A take that finds the current chunk used up drops
/// it, then loads the next one before it returns: a metadata scan from after the last id loaded,
/// cut where the next document would pass the limit (so the sizes are known before any body is
/// read), then one range read of the chunk's bodies, stamped with the scan's etags. The consumer
/// waits meanwhile and nothing is read while it works; <see cref="LoadingTime"/> adds up the
/// loads, so the workload can take them out of its figures. The source holds at most one chunk
/// (<see cref="PeakHeldBytes"/> &lt;= max(limit, largest document)), besides the batches the
/// consumer still holds. A take whose load fails (the scan or the read throws) hands nothing out
/// and loses no place: the next take loads that chunk again.
/// </para>
/// <para>One consumer, as <see cref="IBatchSource"/> says. Owns its snapshot: disposing releases it.</para>
/// </summary>
internal sealed class ChunkedMemoryBatchSource : IBatchSource
{
    public const string StrategyName = "memory-chunked";

    private readonly StoreSnapshot _snapshot;
    private readonly string _collection;
    // The chunk being handed out; null before the first load, while loading and after disposal.
    private MemoryBatchSource? _chunk;
    private string? _lastLoadedId;
    private bool _scanEnded;
    private string? _handedOutThrough;
    private long _loadingTicks;
    private long _loadingProcessorTicks;
    private int _chunksLoaded;
    private long _peakHeldBytes;
    private int _disposed;

    /// <summary>Takes a snapshot of <paramref name="store"/> now; reading starts with the first take.</summary>
    /// <param name="total">
    /// The collection's documents and bytes when the caller knows them (the workload's metadata scan):
    /// <see cref="Pressure"/> reports them from the start, as the prefetcher does within its first
    /// second, and a build's commit cadence (a share of its estimated duration) scales with them.
    /// </param>
    public ChunkedMemoryBatchSource(DocumentStore store, string collection, long chunkLimitBytes, (long Documents, long Bytes)? total = null)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentException.ThrowIfNullOrEmpty(collection);
        if (chunkLimitBytes <= 0)
        {
            throw new ArgumentOutOfRangeException(
                nameof(chunkLimitBytes), chunkLimitBytes, $"{nameof(chunkLimitBytes)} is {chunkLimitBytes}; it must be more than 0 bytes.");
        }

        _collection = collection;
        ChunkLimitBytes = chunkLimitBytes;
        Pressure = new PrefetchPressure { Strategy = StrategyName, DocumentsTotal = total?.Documents, BytesTotal = total?.Bytes };
        _snapshot = store.CreateSnapshot();
        SnapshotEtag = _snapshot.Etag;
    }

    public PrefetchPressure Pressure { get; }

    public long SnapshotEtag { get; }

    /// <summary>The last id handed out: documents go out in key order, so every one up to it was.</summary>
    public string? HandedOutThrough => Volatile.Read(ref _handedOutThrough);

    public PrefetchPipeline? Pipeline => null;

    /// <summary>The most body bytes one chunk may hold (a single larger document is a chunk of its own).</summary>
    public long ChunkLimitBytes { get; }

    /// <summary>Time the takes spent loading chunks (the consumer waited for it).</summary>
    public TimeSpan LoadingTime => Stopwatch.GetElapsedTime(0, Volatile.Read(ref _loadingTicks));

    /// <summary>Processor time the whole process used while the takes loaded chunks (their own reading and anything running beside it).</summary>
    public TimeSpan LoadingProcessorTime => TimeSpan.FromTicks(Volatile.Read(ref _loadingProcessorTicks));

    /// <summary>Chunks loaded so far (one more each time a take found the previous one used up).</summary>
    public int ChunksLoaded => Volatile.Read(ref _chunksLoaded);

    /// <summary>The most body bytes the source held at once: the largest chunk it loaded.</summary>
    public long PeakHeldBytes => Volatile.Read(ref _peakHeldBytes);

    /// <summary>
    /// Test hook: runs before each chunk's range read with the chunk's first and last ids; an
    /// exception it throws fails the take as a failed read would. Null outside tests.
    /// </summary>
    internal Action<string, string>? BeforeRangeRead { get; init; }

    public ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxDocuments);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxBytes);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        cancellationToken.ThrowIfCancellationRequested();
        return TakeFromChunksAsync(maxDocuments, maxBytes, cancellationToken);
    }

    public ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            _chunk = null;
            _snapshot.Dispose();
        }

        return ValueTask.CompletedTask;
    }

    // The current chunk's MemoryBatchSource cuts the batch; its end is the chunk used up.
    private async ValueTask<PrefetchBatch?> TakeFromChunksAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken)
    {
        var batch = _chunk is null ? null : await _chunk.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false);
        if (batch is null)
        {
            if (!LoadNextChunk(cancellationToken))
            {
                return null;
            }

            batch = await _chunk.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false)
                ?? throw new UnreachableException("a chunk just loaded holds at least one document.");
        }

        // Kept here as well: the chunk's source is replaced by the next one's.
        Volatile.Write(ref _handedOutThrough, batch.HandedOutThrough);
        return batch;
    }

    // Drops the used-up chunk and loads the next; false once every document was loaded.
    [MemberNotNullWhen(true, nameof(_chunk))]
    private bool LoadNextChunk(CancellationToken cancellationToken)
    {
        if (_scanEnded)
        {
            return false;
        }

        var started = Stopwatch.GetTimestamp();
        var processorStarted = Environment.CpuUsage.TotalTime;
        try
        {
            // Dropped before the next is read, so that the two are never held together.
            _chunk = null;

            var planned = new List<DocumentMetadata>();
            long plannedBytes = 0;
            var full = false;
            foreach (var row in _snapshot.ScanMetadata(_collection, _lastLoadedId, cancellationToken))
            {
                if (planned.Count > 0 && plannedBytes + row.SizeBytes > ChunkLimitBytes)
                {
                    full = true;
                    break;
                }

                planned.Add(row);
                plannedBytes += row.SizeBytes;
            }

            if (planned.Count == 0)
            {
                // Nothing after the last id loaded: the end of the collection.
                _scanEnded = true;
                return false;
            }

            // A run of consecutive rows of one collection: under the snapshot the range holds exactly them.
            var bodies = new List<DocumentBody>(planned.Count);
            BeforeRangeRead?.Invoke(planned[0].Id, planned[^1].Id);
            _snapshot.ReadRange(planned[0].Id, planned[^1].Id, bodies, cancellationToken);
            if (bodies.Count != planned.Count)
            {
                throw new InvalidOperationException(
                    $"the range {MessageText.Quote(planned[0].Id)}..{MessageText.Quote(planned[^1].Id)} held {bodies.Count} bodies under the snapshot at etag {SnapshotEtag}; " +
                    $"its metadata scan listed {planned.Count} documents.");
            }

            var chunk = new List<PrefetchedDocument>(planned.Count);
            long held = 0;
            for (var i = 0; i < planned.Count; i++)
            {
                if (!string.Equals(bodies[i].Id, planned[i].Id, StringComparison.Ordinal))
                {
                    throw new InvalidOperationException(
                        $"document {MessageText.Quote(bodies[i].Id)} has a body under the snapshot at etag {SnapshotEtag} where its metadata scan listed {MessageText.Quote(planned[i].Id)}.");
                }

                chunk.Add(new PrefetchedDocument(planned[i].Id, planned[i].Etag, bodies[i].Body));
                held += bodies[i].Body.Length;
            }

            // A chunk is a run of the collection's documents in key order, so its batches say how far they reach.
            _chunk = new MemoryBatchSource(chunk, SnapshotEtag, inKeyOrder: true);
            _lastLoadedId = planned[^1].Id;
            // A scan that was not cut reached the end of the collection: no chunk follows this one.
            // Marked only now that its bodies are held: a take retried after a failed read of the
            // last chunk loads it again rather than ending early.
            _scanEnded = !full;
            Interlocked.Increment(ref _chunksLoaded);
            Volatile.Write(ref _peakHeldBytes, Math.Max(_peakHeldBytes, held));
            return true;
        }
        finally
        {
            Interlocked.Add(ref _loadingTicks, Stopwatch.GetTimestamp() - started);
            Interlocked.Add(ref _loadingProcessorTicks, (Environment.CpuUsage.TotalTime - processorStarted).Ticks);
        }
    }
}
