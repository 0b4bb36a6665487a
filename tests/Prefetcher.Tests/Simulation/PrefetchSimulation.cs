namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Deterministic discrete-event simulation of the prefetcher in virtual time: documents of a
/// size shape are grouped into read tasks of the controller's target size, up to L readers submit
/// them to the virtual disk model (<see cref="NetworkDiskModelClock"/>) under a byte budget
/// (reserved at submission, released as the indexer consumes), the indexer drains the buffer at a
/// fixed rate, and every jittered tick the real <see cref="ConcurrencyController"/> decides from
/// signals computed exactly as the pipeline would. Tasks are issued in key order: the pipeline's
/// long-read lanes (<see cref="LongReadLanes"/>) are not modelled, so a simulated start among
/// giants waits as the pipeline's did before them. Same setup and seed, same run.
/// </summary>
internal sealed class PrefetchSimulation
{
    private readonly SimulationSetup _setup;
    private readonly Random _random;
    private readonly NetworkDiskModelClock _disk;
    private readonly NetworkDiskModelClock? _changedDisk;
    private readonly ConcurrencyController? _controller;
    private readonly ReadTaskSizer? _fixedSizer;
    private readonly PriorityQueue<SimEvent, (TimeSpan At, long Sequence)> _events = new();

    /// <summary>When each core finishes the CPU work of reads assigned to it; empty without <see cref="SimulationSetup.ReadCpu"/>.</summary>
    private readonly TimeSpan[] _coreFreeAt;

    private readonly List<(TimeSpan, int)> _concurrencySteps = [];
    private readonly List<(TimeSpan, double)> _consumedAtTicks = [(TimeSpan.Zero, 0)];
    private readonly List<(TimeSpan, ControllerDecision)> _decisions = [];
    private readonly List<ReadSample> _tickReads = [];
    private readonly List<(TimeSpan, long)> _taskBytesAtTicks = [];

    // Fed like the pipeline's meter (sizes of documents read), decayed every tick; only its recent
    // maximum reaches the controller, so each read records its largest document.
    private readonly DocumentSizeHistogram _sizes = new();
    private readonly double _sizeDecayFactor;

    private long _sequence;
    private TimeSpan _now;
    private int _concurrency;
    private long _taskBytes;
    private readonly TaskRamp _ramp;
    private readonly long _largeDocumentBytes;
    private long _nextDocument;
    private long? _peekedSize;
    private (long Bytes, int Documents, long LargestDocument, bool Ramp)? _pendingTask;
    private int _readsInFlight;
    private long _inFlightBytes;
    private double _bufferedBytes;
    private TimeSpan? _wakeAt;

    private long _bytesRead;
    private long _documentsRead;
    private double _bytesConsumed;
    private TimeSpan _consumerWaited;

    private TimeSpan _lastTick;
    private long _tickBytes;
    private TimeSpan _tickWaitedAtStart;
    private TimeSpan _tickInFlight;

    // What the pipeline would remember for the device: the last plateau's L and rate per stream.
    private RememberedConcurrency? _settled;

    private PrefetchSimulation(SimulationSetup setup)
    {
        _setup = setup;
        _random = new Random(setup.Seed);
        _sizeDecayFactor = DocumentSizeHistogram.FactorForHalfLife(TimeSpan.FromSeconds(10), setup.Tick);
        _disk = new NetworkDiskModelClock(setup.Disk);
        _coreFreeAt = new TimeSpan[setup.ReadCpu?.Cores ?? 0];
        _changedDisk = setup.DiskChange is { } change ? new NetworkDiskModelClock(change.Disk) : null;
        var plan = PlanOptions.ForBudget(setup.BudgetBytes, setup.Controller.FirstTaskBytes);
        _ramp = new TaskRamp(plan.FirstTaskBytes);
        _largeDocumentBytes = plan.LargeDocumentThresholdBytes;
        if (setup.FixedConcurrency is { } fixedConcurrency)
        {
            _fixedSizer = new ReadTaskSizer(setup.Controller);
            _concurrency = fixedConcurrency;
            _taskBytes = _fixedSizer.TargetBytes(TimeSpan.Zero, fixedConcurrency, setup.BudgetBytes);
        }
        else
        {
            _controller = new ConcurrencyController(setup.Controller, setup.Remembered, setup.BudgetBytes);
            _concurrency = _controller.Concurrency;
            _taskBytes = _controller.TargetTaskBytes;
        }
        _concurrencySteps.Add((TimeSpan.Zero, _concurrency));
    }

    private enum EventKind
    {
        Tick,
        ReadCompleted,
        BudgetFreed,

        /// <summary>The device has served a read; its CPU work comes next (<see cref="SimulationSetup.ReadCpu"/>).</summary>
        DeviceDone,
    }

    private bool ReadBound => double.IsPositiveInfinity(_setup.IndexingBytesPerSecond);

    // The device reads are submitted to now: after a scripted change, the new one (its slots free
    // at the change; reads already submitted finish on the old one).
    private NetworkDiskModelClock Disk => _changedDisk is not null && _now >= _setup.DiskChange!.Value.At ? _changedDisk : _disk;

    private bool CollectionRead => _setup.DocumentCount is { } count && _nextDocument >= count && _peekedSize is null && _pendingTask is null;

    public static SimulationResult Run(SimulationSetup setup) => new PrefetchSimulation(setup).Run();

    private SimulationResult Run()
    {
        ScheduleNextTick();
        Submit();
        var end = _setup.Duration;
        while (_events.TryDequeue(out var next, out var at))
        {
            if (at.At > end)
            {
                break;
            }
            Consume(at.At);
            switch (next.Kind)
            {
                case EventKind.ReadCompleted:
                    Completed(next);
                    break;
                case EventKind.Tick:
                    Tick();
                    break;
                case EventKind.BudgetFreed:
                    _wakeAt = null;
                    break;
                case EventKind.DeviceDone:
                    Schedule(OnCpu(next.Bytes), next with { Kind = EventKind.ReadCompleted });
                    break;
            }
            Submit();
            if (CollectionRead && _readsInFlight == 0)
            {
                // Everything is read: the run ends when the indexer has drained the buffer.
                end = ReadBound ? _now : _now + Seconds(_bufferedBytes / _setup.IndexingBytesPerSecond);
                break;
            }
        }
        Consume(end);
        return new SimulationResult(
            ReadBound,
            end, _bytesRead, _bytesConsumed, _documentsRead, _consumerWaited,
            _concurrencySteps, _consumedAtTicks, _decisions, _taskBytesAtTicks)
        {
            Settled = _settled,
        };
    }

    /// <summary>The indexer drains the buffer at its rate up to <paramref name="until"/>, waiting when it is empty.</summary>
    private void Consume(TimeSpan until)
    {
        var span = until - _now;
        _tickInFlight += span * _readsInFlight;
        var elapsed = span.TotalSeconds;
        _now = until;
        if (ReadBound)
        {
            // Infinitely fast indexer: it takes data the moment it arrives and otherwise waits.
            _consumerWaited += span;
            return;
        }
        var capacity = _setup.IndexingBytesPerSecond * elapsed;
        if (_bufferedBytes >= capacity)
        {
            _bufferedBytes -= capacity;
            _bytesConsumed += capacity;
            return;
        }
        _consumerWaited += Seconds(elapsed - (_bufferedBytes / _setup.IndexingBytesPerSecond));
        _bytesConsumed += _bufferedBytes;
        _bufferedBytes = 0;
    }

    private void Completed(SimEvent read)
    {
        _readsInFlight--;
        _inFlightBytes -= read.Bytes;
        _bytesRead += read.Bytes;
        _documentsRead += read.Documents;
        _tickBytes += read.Bytes;
        _tickReads.Add(new ReadSample(read.Bytes, read.Documents, _now - read.SubmittedAt, read.Ramp));
        _sizes.Record(read.LargestDocument, "simulated");
        if (ReadBound)
        {
            _bytesConsumed += read.Bytes;
        }
        else
        {
            _bufferedBytes += read.Bytes;
        }
    }

    /// <summary>Readers below L take the next task while the budget has room for it.</summary>
    private void Submit()
    {
        while (_readsInFlight < _concurrency)
        {
            if (_pendingTask is null)
            {
                if (CollectionRead)
                {
                    return;
                }
                _pendingTask = NextTask();
            }
            var task = _pendingTask.Value;
            var reserved = _inFlightBytes + _bufferedBytes;
            // A task larger than the whole budget may still run alone, or nothing would ever read it.
            if (reserved + task.Bytes > _setup.BudgetBytes && reserved > 0)
            {
                WakeWhenBudgetFrees(reserved + task.Bytes - _setup.BudgetBytes);
                return;
            }
            // The store's own work for each document (a MultiGet's per-key cost) happens outside the device's slots.
            var completion = Disk.Submit(_now, task.Bytes) + (_setup.DocumentReadCost * task.Documents);
            if (_setup.SharedStageBytesPerSecond is { } shared)
            {
                completion += Seconds(task.Bytes * (_readsInFlight + 1) / shared);
            }
            var kind = _coreFreeAt.Length > 0 ? EventKind.DeviceDone : EventKind.ReadCompleted;
            Schedule(completion, new SimEvent(kind, _now, task.Bytes, task.Documents, task.LargestDocument, task.Ramp));
            _readsInFlight++;
            _inFlightBytes += task.Bytes;
            _pendingTask = null;
        }
    }

    /// <summary>
    /// Cuts the next task as the planner does: before a document that would take it past the
    /// target (a task holds at least one document), or at 4096 documents. So a giant is a read of
    /// its own and the small documents between two giants a short read, as in the pipeline; the
    /// run's first tasks of small documents ramp up to the target (<see cref="TaskRamp"/>).
    /// </summary>
    private (long Bytes, int Documents, long LargestDocument, bool Ramp) NextTask()
    {
        long bytes = 0;
        long largest = 0;
        var documents = 0;
        var target = NextSize() is { } first && first <= _largeDocumentBytes ? _ramp.Next(_taskBytes, _concurrency) : _taskBytes;
        var ramp = target < _taskBytes;
        while (documents < PlanOptions.DefaultMaxDocumentsPerTask && NextSize() is { } size)
        {
            if (documents > 0 && bytes + size > target)
            {
                break;
            }
            _peekedSize = null;
            bytes += size;
            largest = Math.Max(largest, size);
            documents++;
        }
        return (bytes, documents, largest, ramp);
    }

    // The next document's size, drawn once and kept until a task takes it; null when none is left.
    private long? NextSize()
    {
        if (_peekedSize is null && !(_setup.DocumentCount is { } count && _nextDocument >= count))
        {
            _peekedSize = _setup.Shape.NextSize(_random, _nextDocument++);
        }
        return _peekedSize;
    }

    /// <summary>Runs a read's CPU work, from now, on the core that frees first (FIFO); returns when it is done.</summary>
    private TimeSpan OnCpu(long bytes)
    {
        var core = 0;
        for (var i = 1; i < _coreFreeAt.Length; i++)
        {
            if (_coreFreeAt[i] < _coreFreeAt[core])
            {
                core = i;
            }
        }
        var start = _coreFreeAt[core] > _now ? _coreFreeAt[core] : _now;
        _coreFreeAt[core] = start + Seconds(bytes / _setup.ReadCpu!.Value.BytesPerSecondPerCore);
        return _coreFreeAt[core];
    }

    private void WakeWhenBudgetFrees(double bytesNeeded)
    {
        // Completions re-check by themselves; only the indexer's steady draining needs a wake-up.
        if (ReadBound || bytesNeeded > _bufferedBytes)
        {
            return;
        }
        var at = _now + Seconds(bytesNeeded / _setup.IndexingBytesPerSecond) + TimeSpan.FromTicks(1);
        if (_wakeAt is null || at < _wakeAt)
        {
            _wakeAt = at;
            Schedule(at, new SimEvent(EventKind.BudgetFreed, _now, 0, 0));
        }
    }

    private void Tick()
    {
        var duration = _now - _lastTick;
        var waited = _consumerWaited - _tickWaitedAtStart;
        var signals = new ControllerSignals
        {
            Now = _now,
            TickDuration = duration,
            BytesDelivered = _tickBytes,
            Reads = _tickReads.ToArray(),
            ReadsInFlightTime = _setup.LittlesLaw ? _tickInFlight : TimeSpan.Zero,
            ConsumerWaitFraction = Math.Clamp(waited / duration, 0, 1),
            BufferedBytes = (long)_bufferedBytes,
            InFlightBytes = _inFlightBytes,
            BudgetBytes = _setup.BudgetBytes,
            LargestRecentDocumentBytes = _setup.SizesEnterController ? _sizes.Snapshot().Max : 0,
            ForegroundP99 = _setup.ForegroundP99?.Invoke(_now, Disk.OutstandingAt(_now)),
            MaxConcurrency = _setup.LiveMaxConcurrency?.Invoke(_now),
        };
        var before = _concurrency;
        if (_controller is not null)
        {
            var decision = _controller.Decide(signals);
            _decisions.Add((_now, decision));
            _concurrency = decision.Concurrency;
            _taskBytes = decision.TargetTaskBytes;
            if (_controller.Settled)
            {
                _settled = new RememberedConcurrency(decision.Concurrency, _controller.StreamBytesPerSecond);
            }
        }
        else
        {
            _fixedSizer!.Observe(_now, _tickBytes, duration, _concurrency);
            _taskBytes = _fixedSizer.TargetBytes(_now, _concurrency, _setup.BudgetBytes);
        }
        if (_concurrency != before)
        {
            _concurrencySteps.Add((_now, _concurrency));
        }
        _consumedAtTicks.Add((_now, _bytesConsumed));
        _taskBytesAtTicks.Add((_now, _taskBytes));
        _sizes.Decay(_sizeDecayFactor);
        _lastTick = _now;
        _tickBytes = 0;
        _tickReads.Clear();
        _tickInFlight = TimeSpan.Zero;
        _tickWaitedAtStart = _consumerWaited;
        ScheduleNextTick();
    }

    private void ScheduleNextTick()
    {
        var jitter = 1 + (_setup.TickJitter * ((2 * _random.NextDouble()) - 1));
        Schedule(_now + ((_lastTick == TimeSpan.Zero && _setup.FirstTick < _setup.Tick ? _setup.FirstTick : _setup.Tick) * jitter), new SimEvent(EventKind.Tick, _now, 0, 0));
    }

    private void Schedule(TimeSpan at, SimEvent e) => _events.Enqueue(e, (at, _sequence++));

    private static TimeSpan Seconds(double seconds) => TimeSpan.FromTicks((long)Math.Ceiling(seconds * TimeSpan.TicksPerSecond));

    private readonly record struct SimEvent(EventKind Kind, TimeSpan SubmittedAt, long Bytes, int Documents, long LargestDocument = 0, bool Ramp = false);
}
