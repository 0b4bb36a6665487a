namespace Indexing.Prefetcher;

/// <summary>
/// The modelled network disk in real time: each read waits FIFO for one of
/// <see cref="NetworkDiskModelOptions.UsefulQueueDepth"/> slots and then holds it for the
/// modelled service time (<see cref="NetworkDiskModelOptions.ServiceTime"/>). It only adds delay:
/// the real read path performs the store read and then calls this model, so a fast local disk
/// behaves like a cloud volume. Cancellation during the wait or the delay returns promptly.
/// <para>
/// Thread-safe: any number of async callers and dedicated reader threads may read at once.
/// For virtual time use <see cref="NetworkDiskModelClock"/>, which has the same semantics.
/// </para>
/// </summary>
public sealed class NetworkDiskModel
{
    private readonly FifoSlotGate _slots;

    /// <summary>A model with these parameters (validated); share one between the reads of one modelled device.</summary>
    public NetworkDiskModel(NetworkDiskModelOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options.Validate();
        _slots = new FifoSlotGate(options.UsefulQueueDepth);
    }

    /// <summary>The model's parameters.</summary>
    public NetworkDiskModelOptions Options { get; }

    /// <summary>Requests holding a slot now.</summary>
    public int ActiveRequests => _slots.InUse;

    /// <summary>Requests waiting for a slot now.</summary>
    public int QueuedRequests => _slots.Waiting;

    internal async ValueTask ReadAsync(long bytes, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        var active = await _slots.AcquireAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            await Task.Delay(Options.ServiceTime(bytes, active), cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _slots.Release();
        }
    }

    /// <summary>Blocking form of <see cref="ReadAsync"/>, for dedicated reader threads.</summary>
    internal void Read(long bytes, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        var active = _slots.Acquire(cancellationToken);
        try
        {
            // Waiting on the token's handle rather than sleeping: a cancel wakes the thread at once.
            if (cancellationToken.WaitHandle.WaitOne(Options.ServiceTime(bytes, active)))
            {
                cancellationToken.ThrowIfCancellationRequested();
            }
        }
        finally
        {
            _slots.Release();
        }
    }
}
