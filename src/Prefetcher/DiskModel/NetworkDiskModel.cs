using System.Threading.Channels;

namespace Indexing.Prefetcher;

/// <summary>
/// The modelled network disk in real time: after the real read, each waits FIFO for one of
/// <see cref="NetworkDiskModelOptions.UsefulQueueDepth"/> slots and holds it for the service time.
/// The slots are a bounded channel, which serves async and blocking waiters in arrival order alike
/// (SemaphoreSlim does not): async foreground Gets share the model with blocking readers.
/// </summary>
internal sealed class NetworkDiskModel
{
    private readonly Channel<byte> _slots;
    private int _queued;

    /// <summary>A model with these parameters (validated); share one between the reads of one modelled device.</summary>
    public NetworkDiskModel(NetworkDiskModelOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options.Validate();
        _slots = Channel.CreateBounded<byte>(new BoundedChannelOptions(options.UsefulQueueDepth) { FullMode = BoundedChannelFullMode.Wait });
    }

    /// <summary>The model's parameters.</summary>
    public NetworkDiskModelOptions Options { get; }

    /// <summary>Requests holding a slot now.</summary>
    public int ActiveRequests => _slots.Reader.Count;

    /// <summary>Requests waiting for a slot now.</summary>
    public int QueuedRequests => Volatile.Read(ref _queued);

    internal async ValueTask ReadAsync(long bytes, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        await AcquireAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await Task.Delay(Options.ServiceTime(bytes, ActiveRequests), cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _slots.Reader.TryRead(out _);
        }
    }

    /// <summary>Blocking form of <see cref="ReadAsync"/>, for dedicated reader threads.</summary>
    internal void Read(long bytes, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        var acquire = AcquireAsync(cancellationToken);
        if (!acquire.IsCompletedSuccessfully)
        {
            acquire.AsTask().GetAwaiter().GetResult();
        }

        try
        {
            // Waiting on the token's handle rather than sleeping: a cancel wakes the thread at once.
            if (cancellationToken.WaitHandle.WaitOne(Options.ServiceTime(bytes, ActiveRequests)))
            {
                cancellationToken.ThrowIfCancellationRequested();
            }
        }
        finally
        {
            _slots.Reader.TryRead(out _);
        }
    }

    private ValueTask AcquireAsync(CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return _slots.Writer.TryWrite(0) ? ValueTask.CompletedTask : WaitForSlotAsync(cancellationToken);
    }

    private async ValueTask WaitForSlotAsync(CancellationToken cancellationToken)
    {
        Interlocked.Increment(ref _queued);
        try
        {
            await _slots.Writer.WriteAsync(0, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            Interlocked.Decrement(ref _queued);
        }
    }
}
