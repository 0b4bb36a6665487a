using System.Runtime.ExceptionServices;

using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// One read of a collection for several consumers: the rebuilds of every index over it that start
/// together. The source (one snapshot, one metadata scan, one read of each document) hands each
/// batch out once, to whichever reader is furthest ahead; the pass keeps it in a log until every
/// reader has taken it, and only then returns its bytes to the source's budget (the source defers
/// its own release: <see cref="PrefetchPipeline.DeferRelease"/>). So the budget bounds the log: the
/// furthest reader can be at most a budget ahead of the slowest, and then it waits. The fast
/// builders wait rather than the slow one leaving to read alone: docs/decisions/0014-shared-pass.md.
/// </summary>
/// <remarks>
/// <para>
/// Joining. A reader joins while the join window is open (for <c>joinWindow</c> from the first
/// reader's join): the log keeps every batch from the start until the window closes, so a reader
/// that joins late in the window still gets the whole pass. After the window, or once every
/// reader left, <see cref="TryJoin"/> refuses and the caller waits for <see cref="Ended"/> to start
/// the next pass. A reader may start after a later key than the pass (a resumed build): it is handed
/// only the documents after its key, and its <see cref="IBatchSource.HandedOutThrough"/> is never
/// below that key. A reader whose key is before the pass's start cannot join.
/// </para>
/// <para>
/// Threading: readers take from any thread, one take at a time each; one lock guards the log, and
/// one gate lets one reader at a time take from the source (the source serves one consumer).
/// </para>
/// </remarks>
internal sealed class SharedPass
{
    private readonly IBatchSource _source;
    private readonly Lock _lock = new();
    private readonly SemaphoreSlim _sourceGate = new(1, 1);
    private readonly List<Entry> _log = [];
    private readonly List<Reader> _readers = [];
    private readonly TaskCompletionSource _ended = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TimeSpan _joinWindow;
    private Timer? _windowTimer;
    private long _logStart;
    private bool _windowOpen = true;
    private bool _sourceDone;
    private bool _closed;
    private ExceptionDispatchInfo? _failure;

    /// <summary>
    /// Owns <paramref name="source"/> (not yet taken from) and shares it; the pass disposes it when its
    /// last reader leaves. The join window opens with the first reader, which <see cref="TryJoin"/> always admits
    /// when its key is not before the source's start.
    /// </summary>
    public SharedPass(IBatchSource source, TimeSpan joinWindow)
    {
        ArgumentNullException.ThrowIfNull(source);
        ArgumentOutOfRangeException.ThrowIfLessThan(joinWindow, TimeSpan.Zero);
        _source = source;
        _joinWindow = joinWindow;
        StartAfterId = source.HandedOutThrough;
        source.Pipeline?.DeferRelease();
    }

    /// <summary>The source every reader shares.</summary>
    public IBatchSource Source => _source;

    /// <summary>Where the source starts: after this id (null: the collection's first).</summary>
    public string? StartAfterId { get; }

    /// <summary>Completes when the last reader left and the source was disposed: a refused reader waits for it, then starts the next pass.</summary>
    public Task Ended => _ended.Task;

    /// <summary>Whether the pass takes no more readers (its window closed, or every reader left).</summary>
    public bool Closed
    {
        get
        {
            lock (_lock)
            {
                return _closed || !_windowOpen;
            }
        }
    }

    /// <summary>The labels of the readers still reading, in the order they joined.</summary>
    public IReadOnlyList<string> Readers
    {
        get
        {
            lock (_lock)
            {
                return [.. _readers.Select(r => r.Label)];
            }
        }
    }

    /// <summary>
    /// Adds a reader of every document after <paramref name="startAfterId"/> (null: from the pass's
    /// start), named <paramref name="label"/> in the pass's pressure; false when the window closed,
    /// every reader left, the source failed, or the key is before the pass's start.
    /// </summary>
    public bool TryJoin(string? startAfterId, string label, out IBatchSource reader)
    {
        ArgumentNullException.ThrowIfNull(label);
        lock (_lock)
        {
            if (_closed || !_windowOpen || _failure is not null || DocumentIds.CompareKeyOrder(startAfterId, StartAfterId) < 0)
            {
                reader = null!;
                return false;
            }

            // The window keeps the log from the start: the reader gets all of it.
            foreach (var entry in _log)
            {
                entry.Remaining++;
            }

            var joined = new Reader(this, label, startAfterId, _logStart);
            _readers.Add(joined);
            reader = joined;
            if (_readers.Count == 1 && _log.Count == 0 && _windowTimer is null)
            {
                // The first reader: the window runs from now, so nothing can close it before the
                // rebuild that started the pass has joined.
                if (_joinWindow == TimeSpan.Zero)
                {
                    _windowOpen = false;
                }
                else
                {
                    _windowTimer = new Timer(static state => ((SharedPass)state!).CloseWindow(), this, _joinWindow, Timeout.InfiniteTimeSpan);
                }
            }

            return true;
        }
    }

    private void CloseWindow()
    {
        lock (_lock)
        {
            _windowOpen = false;
            TrimLocked();
        }
    }

    // Returns to the budget the batches every reader has taken, oldest first; while the window is
    // open they stay, for readers yet to join (docs/decisions/0014-shared-pass.md: what that costs).
    private void TrimLocked()
    {
        while (!_windowOpen && _log.Count > 0 && _log[0].Remaining == 0)
        {
            Release(_log[0].Batch.TotalBytes);
            _log.RemoveAt(0);
            _logStart++;
        }
    }

    private void Release(long bytes) => _source.Pipeline?.ReleaseTaken(bytes);

    // The reader has nothing left in the log: take the next batch from the source (one reader at a
    // time), unless another reader added one meanwhile or the source ended.
    private async ValueTask FetchAsync(Reader reader, int maxDocuments, long maxBytes, CancellationToken cancellationToken)
    {
        await _sourceGate.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            lock (_lock)
            {
                if (_sourceDone || reader.Position < _logStart + _log.Count)
                {
                    return;
                }
            }

            PrefetchBatch? batch;
            try
            {
                batch = await _source.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false);
            }
            catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
            {
                throw; // this reader's rebuild stopped; the others go on
            }
            catch (Exception exception)
            {
                lock (_lock)
                {
                    _failure = ExceptionDispatchInfo.Capture(exception);
                    _sourceDone = true;
                }

                return;
            }

            lock (_lock)
            {
                if (batch is null)
                {
                    _sourceDone = true;
                    return;
                }

                _log.Add(new Entry(batch, _readers.Count));
            }
        }
        finally
        {
            _sourceGate.Release();
        }
    }

    private async ValueTask LeaveAsync(Reader reader)
    {
        lock (_lock)
        {
            if (!_readers.Remove(reader))
            {
                return;
            }

            for (var index = reader.Position - _logStart; index < _log.Count; index++)
            {
                _log[(int)index].Remaining--;
            }

            if (_readers.Count > 0)
            {
                TrimLocked();
                return;
            }

            // The last reader left: nobody else may join a pass nobody reads; return every batch held.
            _closed = true;
            _windowOpen = false;
            foreach (var entry in _log)
            {
                Release(entry.Batch.TotalBytes);
            }

            _log.Clear();
        }

        try
        {
            Timer? timer;
            lock (_lock)
            {
                timer = _windowTimer;
            }

            if (timer is not null)
            {
                await timer.DisposeAsync().ConfigureAwait(false);
            }

            await _source.DisposeAsync().ConfigureAwait(false);
            _ended.TrySetResult();
        }
        catch (Exception exception)
        {
            // The next pass need not wait on a release failure; the last reader reports it.
            _ended.TrySetResult();
            ExceptionDispatchInfo.Capture(exception).Throw();
        }
    }

    private sealed class Entry(PrefetchBatch batch, int remaining)
    {
        public PrefetchBatch Batch { get; } = batch;

        // Readers that have not yet taken all of it.
        public int Remaining { get; set; } = remaining;
    }

    /// <summary>One consumer's view of the pass: every batch, in the order the source handed them out, from its own key.</summary>
    internal sealed class Reader(SharedPass pass, string label, string? startAfterId, long position) : IBatchSource
    {
        private readonly string? _startAfterId = startAfterId;
        private string? _through = startAfterId;
        private int _offset;
        private int _taking;
        private int _left;
        private long _documents;
        private long _bytes;
        private long _skippedDocuments;
        private long _skippedBytes;

        public string Label { get; } = label;

        public SharedPass Pass => pass;

        // The log entry the reader takes from next (an absolute index); under the pass's lock.
        public long Position { get; private set; } = position;

        public long SnapshotEtag => pass._source.SnapshotEtag;

        // The pass holds and returns the bytes of what it hands out; a reader has no budget of its own.
        public PrefetchPipeline? Pipeline => null;

        public string? HandedOutThrough
        {
            get
            {
                lock (pass._lock)
                {
                    return _through;
                }
            }
        }

        /// <summary>
        /// The source's pressure (the read is one for all readers), with this reader's own progress:
        /// what it was handed, and the totals less what it skipped before its key.
        /// </summary>
        public PrefetchPressure Pressure
        {
            get
            {
                var shared = pass._source.Pressure;
                lock (pass._lock)
                {
                    return shared with
                    {
                        DocumentsDone = _documents,
                        BytesDone = _bytes,
                        DocumentsPlanned = Math.Max(0, shared.DocumentsPlanned - _skippedDocuments),
                        BytesPlanned = Math.Max(0, shared.BytesPlanned - _skippedBytes),
                        DocumentsTotal = shared.DocumentsTotal - _skippedDocuments,
                        BytesTotal = shared.BytesTotal - _skippedBytes,
                        SharedBy = pass._readers.Count > 1 ? [.. pass._readers.Select(r => r.Label)] : null,
                    };
                }
            }
        }

        public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
        {
            ArgumentOutOfRangeException.ThrowIfLessThan(maxDocuments, 1);
            ArgumentOutOfRangeException.ThrowIfLessThan(maxBytes, 1L);
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _left) != 0, this);
            if (Interlocked.Exchange(ref _taking, 1) != 0)
            {
                throw new InvalidOperationException("A take is already in progress; a reader of a shared pass serves one consumer, one take at a time.");
            }

            try
            {
                var waited = false;
                while (true)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    lock (pass._lock)
                    {
                        // Left meanwhile (disposed during its own take): it must not take what the
                        // others' counts no longer include.
                        ObjectDisposedException.ThrowIf(Volatile.Read(ref _left) != 0, this);
                        if (TryTakeLocked(maxDocuments, maxBytes, waited) is { } batch)
                        {
                            return batch;
                        }

                        if (pass._sourceDone && Position == pass._logStart + pass._log.Count)
                        {
                            pass._failure?.Throw();
                            return null;
                        }
                    }

                    waited = true;
                    await pass.FetchAsync(this, maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false);
                }
            }
            finally
            {
                Volatile.Write(ref _taking, 0);
            }
        }

        /// <summary>Leaves the pass; the last reader to leave disposes the source (and waits for its readers to stop).</summary>
        public ValueTask DisposeAsync() =>
            Interlocked.Exchange(ref _left, 1) == 0 ? pass.LeaveAsync(this) : ValueTask.CompletedTask;

        // Hands out what the log holds for this reader, up to the limits, skipping documents at or
        // before its key; null when the log holds nothing more for it.
        private PrefetchBatch? TryTakeLocked(int maxDocuments, long maxBytes, bool waited)
        {
            List<PrefetchedDocument>? documents = null;
            long bytes = 0;
            while (Position < pass._logStart + pass._log.Count)
            {
                var entry = pass._log[(int)(Position - pass._logStart)];
                var entryDocuments = entry.Batch.Documents;
                while (_offset < entryDocuments.Count)
                {
                    var document = entryDocuments[_offset];
                    if (_startAfterId is not null && DocumentIds.CompareKeyOrder(document.Id, _startAfterId) <= 0)
                    {
                        _skippedDocuments++;
                        _skippedBytes += document.SizeBytes;
                        _offset++;
                        continue;
                    }

                    var count = documents?.Count ?? 0;
                    if (count == maxDocuments || (count > 0 && bytes + document.SizeBytes > maxBytes))
                    {
                        return Handed(documents!, bytes, waited);
                    }

                    (documents ??= []).Add(document);
                    bytes += document.SizeBytes;
                    _offset++;
                }

                // Every document of the entry is handed out: the source's watermark after it holds
                // for this reader too (it took every batch before it), never below the reader's key.
                if (DocumentIds.CompareKeyOrder(entry.Batch.HandedOutThrough, _through) > 0)
                {
                    _through = entry.Batch.HandedOutThrough;
                }

                Position++;
                _offset = 0;
                entry.Remaining--;
                pass.TrimLocked();
            }

            return documents is null ? null : Handed(documents, bytes, waited);
        }

        private PrefetchBatch Handed(List<PrefetchedDocument> documents, long bytes, bool waited)
        {
            _documents += documents.Count;
            _bytes += bytes;
            return new PrefetchBatch(documents, bytes, waited, _through);
        }
    }
}
