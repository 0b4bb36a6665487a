using System.Threading.Channels;

using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// The consumer's side: completed reads, first in key order, merged or split to fit a take. A take
/// never waits for a read still running, and a giant that completes late does not queue behind a
/// budget's worth of later reads (holding the handed-out prefix, and what a resumed build skips,
/// that far back). The byte budget bounds the channel. Taking and draining hold one lock, so a drain
/// at shutdown and a take woken by the channel's completion never hand out the same document.
/// </summary>
internal sealed class ReadyReads(PrefetchMeter meter, ReadPolicy policy, string? startAfterId)
{
    private readonly HandOutWatermark _watermark = new(startAfterId);

    private readonly Channel<CompletedRead> _channel = Channel.CreateUnbounded<CompletedRead>(
        new UnboundedChannelOptions { AllowSynchronousContinuations = false });

    private readonly Lock _takeLock = new();
    private readonly PriorityQueue<CompletedRead, long> _completed = new();
    private CompletedRead? _current;
    private int _offset;
    private int _taking;
    private int _completedCount;
    private volatile bool _deferRelease;

    /// <summary>Completed reads not yet fully taken.</summary>
    public int Queued => _channel.Reader.Count + Volatile.Read(ref _completedCount) + (Volatile.Read(ref _current) is null ? 0 : 1);

    public string? HandedOutThrough => _watermark.Through;

    /// <summary>
    /// From now on a take leaves its bytes in the budget; whoever took them returns them with
    /// <see cref="ReadAdmission.Release"/> (a shared pass, once its last reader took the batch).
    /// Call before the first take.
    /// </summary>
    public void DeferRelease() => _deferRelease = true;

    public void Publish(CompletedRead read)
    {
        if (!_channel.Writer.TryWrite(read))
        {
            throw new InvalidOperationException(
                $"A read of {MessageText.Quote(read.Task.FirstId)}..{MessageText.Quote(read.Task.LastId)} completed after the prefetcher stopped publishing; readers must stop first.");
        }
    }

    /// <summary>No more reads will be published; takes drain what is there, then see the end.</summary>
    public void Complete() => _channel.Writer.TryComplete();

    /// <summary>Takes what is ready; if nothing is, tells the policy and waits. Null when nothing more will come.</summary>
    public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxDocuments, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(maxBytes, 1L);
        if (Interlocked.Exchange(ref _taking, 1) != 0)
        {
            throw new InvalidOperationException("A take is already in progress; a prefetcher serves one consumer, one take at a time.");
        }

        try
        {
            if (TryTake(maxDocuments, maxBytes, waited: false) is { } ready)
            {
                return ready;
            }

            policy.NothingReady(meter.Admission);
            using (meter.ConsumerWait.Measure())
            {
                while (await _channel.Reader.WaitToReadAsync(cancellationToken).ConfigureAwait(false))
                {
                    if (TryTake(maxDocuments, maxBytes, waited: true) is { } batch)
                    {
                        return batch;
                    }
                }

                return null;
            }
        }
        finally
        {
            Volatile.Write(ref _taking, 0);
        }
    }

    /// <summary>At shutdown, after the readers stopped: returns every buffered byte to the budget.</summary>
    public void DrainAndRelease()
    {
        lock (_takeLock)
        {
            var bytes = _current?.Documents.Skip(_offset).Sum(document => document.SizeBytes) ?? 0;
            _current = null;
            while (_channel.Reader.TryRead(out var read) || _completed.TryDequeue(out read, out _))
            {
                bytes += read.Bytes;
            }

            Volatile.Write(ref _completedCount, 0);

            meter.Admission.Release(bytes);
        }
    }

    private PrefetchBatch? TryTake(int maxDocuments, long maxBytes, bool waited)
    {
        lock (_takeLock)
        {
            List<PrefetchedDocument>? documents = null;
            long bytes = 0;
            while (NextDocument() is { } document)
            {
                var count = documents?.Count ?? 0;
                if (count == maxDocuments || (count > 0 && bytes + document.SizeBytes > maxBytes))
                {
                    break;
                }

                documents ??= new List<PrefetchedDocument>(Math.Min(maxDocuments, 1024));
                documents.Add(document);
                bytes += document.SizeBytes;
                _offset++;
                if (_offset == _current!.Documents.Count)
                {
                    _watermark.HandedOut(_current.Task);
                }
            }

            if (documents is null)
            {
                return null;
            }

            if (!_deferRelease)
            {
                meter.Admission.Release(bytes);
            }

            meter.Taken(documents.Count, bytes, waited);
            return new PrefetchBatch(documents, bytes, waited, _watermark.Through);
        }
    }

    // The next document to hand out, without consuming it; moves on to the first completed read in
    // key order when the current one is used up, and tells the policy that the consumer began it.
    private PrefetchedDocument? NextDocument()
    {
        while (true)
        {
            if (_current is { } current && _offset < current.Documents.Count)
            {
                return current.Documents[_offset];
            }

            Volatile.Write(ref _current, null);
            _offset = 0;
            while (_channel.Reader.TryRead(out var published))
            {
                _completed.Enqueue(published, published.Task.Sequence);
            }

            if (!_completed.TryDequeue(out var next, out _))
            {
                return null;
            }

            Volatile.Write(ref _completedCount, _completed.Count);

            Volatile.Write(ref _current, next);
            policy.ConsumerBegan(meter.Admission);
        }
    }
}

/// <summary>A finished read task: its documents in key order and their total size (already buffered in the budget).</summary>
internal sealed record CompletedRead(ReadTask Task, List<PrefetchedDocument> Documents, long Bytes);
