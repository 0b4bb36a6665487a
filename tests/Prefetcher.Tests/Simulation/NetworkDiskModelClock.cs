namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The modelled network disk in virtual time, for discrete-event simulations: given when a
/// request is submitted and its size, returns when it completes. Same semantics as the real-time
/// <see cref="NetworkDiskModel"/>: <see cref="NetworkDiskModelOptions.UsefulQueueDepth"/> slots,
/// served FIFO; a request starts when a slot frees and holds it for
/// <see cref="NetworkDiskModelOptions.ServiceTime"/>. Lets a simulation run thousands of virtual
/// seconds in milliseconds.
/// <para>
/// Times are measured from the start of the simulation, when every slot is free, so they are never
/// negative. Submissions (and <see cref="OutstandingAt"/> queries) must come in non-decreasing time
/// order, as a simulation's event loop produces them. Not thread-safe: one simulation owns it.
/// </para>
/// </summary>
internal sealed class NetworkDiskModelClock
{
    /// <summary>When each slot finishes its last assigned request.</summary>
    private readonly TimeSpan[] _slotFreeAt;

    /// <summary>Completion times of submitted requests not yet known to be done.</summary>
    private readonly PriorityQueue<TimeSpan, TimeSpan> _outstanding = new();

    private TimeSpan _lastTime = TimeSpan.MinValue;

    public NetworkDiskModelClock(NetworkDiskModelOptions options)
    {
        Options = options.Validate();
        _slotFreeAt = new TimeSpan[options.UsefulQueueDepth];
    }

    public NetworkDiskModelOptions Options { get; }

    /// <summary>Submits a request of <paramref name="bytes"/> at <paramref name="submittedAt"/>; returns its completion time.</summary>
    public TimeSpan Submit(TimeSpan submittedAt, long bytes)
    {
        AdvanceTo(submittedAt, nameof(submittedAt));
        // Requests arrive in time order and each takes the slot that frees first, so start times
        // never decrease: this is a FIFO queue in front of the slots.
        var slot = 0;
        for (var i = 1; i < _slotFreeAt.Length; i++)
        {
            if (_slotFreeAt[i] < _slotFreeAt[slot])
            {
                slot = i;
            }
        }
        var start = _slotFreeAt[slot] > submittedAt ? _slotFreeAt[slot] : submittedAt;
        var active = 1;
        foreach (var freeAt in _slotFreeAt)
        {
            if (freeAt > start)
            {
                active++;
            }
        }
        var completion = start + Options.ServiceTime(bytes, active);
        _slotFreeAt[slot] = completion;
        _outstanding.Enqueue(completion, completion);
        return completion;
    }

    /// <summary>Requests submitted by <paramref name="now"/> and not complete at it (in service or queued).</summary>
    public int OutstandingAt(TimeSpan now)
    {
        AdvanceTo(now, nameof(now));
        while (_outstanding.TryPeek(out var completion, out _) && completion <= now)
        {
            _outstanding.Dequeue();
        }
        return _outstanding.Count;
    }

    private void AdvanceTo(TimeSpan now, string parameterName)
    {
        if (now < TimeSpan.Zero)
        {
            // Slots are free from time zero: a request before it would start at zero, not when submitted.
            throw new ArgumentOutOfRangeException(parameterName, now, $"Time is measured from the start of the simulation and must not be negative (was {now}).");
        }
        if (now < _lastTime)
        {
            throw new ArgumentOutOfRangeException(parameterName, now, $"Time must not go backwards (last {_lastTime}).");
        }
        _lastTime = now;
    }
}
