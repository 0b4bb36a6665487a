using System.Collections.Concurrent;
using System.Collections.Immutable;
using System.Diagnostics;

using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

// One rebuild of one index: the replacement generation, its phase and progress, and the task
// running it. The phases themselves are IndexManager.Rebuild.cs and RebuildPhases.cs; this holds
// their state so that progress can be read from any thread while they run.
internal sealed class RebuildRun
{
    private readonly ConcurrentDictionary<RebuildPhase, TimeSpan> _phaseTimes = new();
    private readonly DocumentStore _store;
    private long _phaseStarted = Stopwatch.GetTimestamp();
    private volatile IBatchSource? _prefetch;
    private PrefetchPressure? _lastPressure;
    private int _phase;
    private string? _error;
    private readonly List<string> _notes = [];
    private readonly List<string> _swapSteps = [];
    private int _pastSwitch;
    private long _bulkCommits;

    // Told each phase the run enters, on the thread that enters it (the manager's observer).
    private readonly Action<string, RebuildPhase>? _phaseEntered;

    // phase: the phase the run works from, entered at once when slot holds a slot, else after
    // Queued (the run's task enters it once admitted).
    public RebuildRun(
        DocumentStore store, string name, int generation, IndexDefinition definition, DocumentIndex target, bool inPlace, RebuildPhase phase, string reason,
        RebuildSlots.Ticket slot, CancellationToken shutdown, Action<string, RebuildPhase>? phaseEntered = null)
    {
        _phaseEntered = phaseEntered;
        Slot = slot;
        StartPhase = phase;
        phase = slot.Admitted.IsCompleted ? phase : RebuildPhase.Queued;
        _store = store;
        Name = name;
        Generation = generation;
        Definition = definition;
        Target = target;
        InPlace = inPlace;
        _phase = (int)phase;
        Reason = reason;
        Cancellation = CancellationTokenSource.CreateLinkedTokenSource(shutdown);
    }

    public string Name { get; }

    public int Generation { get; }

    public IndexDefinition Definition { get; }

    public DocumentIndex Target { get; }

    // The initial build of a new index runs on the serving generation itself; there is nothing to swap.
    public bool InPlace { get; }

    public string Reason { get; }

    // The run's place among the manager's rebuild slots (IndexManager.Rebuild.cs says which phases hold one).
    public RebuildSlots.Ticket Slot { get; }

    // The phase the run's work starts in once it holds a slot: Bulk, or a later one for a resumed run.
    public RebuildPhase StartPhase { get; }

    public DateTimeOffset StartedAt { get; } = DateTimeOffset.UtcNow;

    public long SnapshotEtag { get; set; }

    // Set when the bulk phase resumed an interrupted one (RebuildPhases.cs).
    public string? ResumedAfter { get; private set; }

    public long DocumentsSkipped { get; private set; }

    // A bulk commit was made (not the build's first or last), on the build's commit task.
    public void BulkCommitted() => Interlocked.Increment(ref _bulkCommits);

    public void MarkResumed(string resumedAfter, long documentsSkipped)
    {
        DocumentsSkipped = documentsSkipped;
        ResumedAfter = resumedAfter;
    }

    public CancellationTokenSource Cancellation { get; }

    public bool CancelRequested { get; private set; }

    public Task Completion { get; set; } = Task.CompletedTask;

    public RebuildPhase Phase => (RebuildPhase)Volatile.Read(ref _phase);

    // In progress: queued for a slot, or working. A second rebuild of the index is refused meanwhile.
    public bool IsRunning => Phase is RebuildPhase.Queued or RebuildPhase.Bulk or RebuildPhase.CatchUp or RebuildPhase.Swapping;

    // After the catalog switched to the replacement, the rebuild can only finish: cancel is ignored.
    public bool PastSwitch => Volatile.Read(ref _pastSwitch) != 0;

    public void MarkPastSwitch() => Volatile.Write(ref _pastSwitch, 1);

    public void EnterPhase(RebuildPhase phase)
    {
        var now = Stopwatch.GetTimestamp();
        var previous = Phase;
        _phaseTimes[previous] = _phaseTimes.GetValueOrDefault(previous) + Stopwatch.GetElapsedTime(Interlocked.Exchange(ref _phaseStarted, now), now);
        Volatile.Write(ref _phase, (int)phase);
        _phaseEntered?.Invoke(Name, phase);
    }

    public void Fail(string error)
    {
        Volatile.Write(ref _error, error);
        EnterPhase(RebuildPhase.Failed);
    }

    // Notes add up (a catch-up that stopped gaining, a drain that timed out, a cleanup that failed);
    // any thread may add one, also after the run ended (a deferred close of the old generation).
    public void AddNote(string note)
    {
        lock (_notes)
        {
            _notes.Add(note);
        }
    }

    public string? Notes()
    {
        lock (_notes)
        {
            return _notes.Count == 0 ? null : string.Join("; ", _notes);
        }
    }

    // Records how long one step of the swap took (operators ask where a slow swap spent its time);
    // returns the timestamp the next step starts from.
    public long SwapStep(string name, long startedAt)
    {
        var now = Stopwatch.GetTimestamp();
        lock (_swapSteps)
        {
            _swapSteps.Add($"{name} {Stopwatch.GetElapsedTime(startedAt, now).TotalMilliseconds:0} ms");
        }

        return now;
    }

    /// <summary>How the engine names an index's rebuild prefetch, in its registry and in the progress: <c>rebuild &lt;index&gt;</c>.</summary>
    public static string PrefetchName(string indexName) => $"rebuild {indexName}";

    public void AttachPrefetch(IBatchSource source) => _prefetch = source;

    public void DetachPrefetch()
    {
        if (_prefetch is { } source)
        {
            _lastPressure = source.Describe(PrefetchName(Name));
            _prefetch = null;
        }
    }

    public void RequestCancel()
    {
        CancelRequested = true;
        if (!PastSwitch)
        {
            Cancellation.Cancel();
        }
    }

    // On shutdown the rebuild stops where it is; its intent stays in the catalog and it resumes on the next open.
    public async Task StopForShutdownAsync()
    {
        if (!PastSwitch)
        {
            await Cancellation.CancelAsync().ConfigureAwait(false);
        }

        await Completion.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
    }

    private string? SwapSteps()
    {
        lock (_swapSteps)
        {
            return _swapSteps.Count == 0 ? null : string.Join(", ", _swapSteps);
        }
    }

    public RebuildProgress Progress()
    {
        var phase = Phase;
        var pressure = _prefetch is { } source ? source.Describe(PrefetchName(Name)) : _lastPressure;
        var times = _phaseTimes.ToImmutableDictionary();
        if (IsRunning)
        {
            times = times.SetItem(phase, times.GetValueOrDefault(phase) + Stopwatch.GetElapsedTime(Volatile.Read(ref _phaseStarted)));
        }

        // GetStatus reads a removed (cancelled or failed) replacement too: its last applied etag.
        var status = Target.GetStatus();
        var applied = status.AppliedEtag;

        var bulkDone = phase != RebuildPhase.Bulk && pressure is not null;
        var skipped = DocumentsSkipped;
        // The replacement was opened for this run, so its metrics are this run's: in the bulk phase,
        // what its indexing threads did with the batches handed out.
        var documentsDone = skipped + (pressure?.DocumentsDone ?? 0);
        var bytesDone = pressure?.BytesDone ?? 0;
        // Once the bulk phase completed (the run reached catch-up), everything handed out was indexed;
        // the prefetcher's counts are published once a tick, the metrics live, hence the clamps.
        var (documentsIndexed, bytesIndexed) = times.ContainsKey(RebuildPhase.CatchUp)
            ? (documentsDone, bytesDone)
            : (Math.Min(documentsDone, skipped + status.Metrics.Documents + status.FailedDocuments), Math.Min(bytesDone, status.Metrics.Bytes));
        return new RebuildProgress(
            Name,
            Generation,
            phase,
            Reason,
            StartedAt,
            DocumentsDone: documentsDone,
            DocumentsTotal: skipped + (bulkDone ? pressure!.DocumentsDone : pressure?.DocumentsKnown ?? 0),
            BytesDone: bytesDone,
            BytesTotal: bulkDone ? pressure!.BytesDone : pressure?.BytesKnown ?? 0,
            SnapshotEtag,
            applied,
            LagEtags: IsRunning ? Math.Max(0, _store.LastEtag - applied) : 0,
            Eta: phase == RebuildPhase.Bulk ? pressure?.Eta : null,
            times,
            Volatile.Read(ref _error),
            Notes(),
            SwapSteps(),
            pressure)
        {
            ResumedAfter = ResumedAfter,
            DocumentsSkipped = skipped,
            DocumentsIndexed = documentsIndexed,
            BytesIndexed = bytesIndexed,
            BulkCommitInterval = status.BulkCommitInterval,
            BulkCommits = Interlocked.Read(ref _bulkCommits),
            QueuePosition = phase == RebuildPhase.Queued ? Slot.QueuePosition : null,
        };
    }
}

// The bulk phase's batch source as the replacement sees it, calling the test hook once the first
// batch was taken (a point inside the bulk phase, with reads in flight).
internal sealed class HookedBatchSource(IBatchSource inner, Action firstBatchTaken) : IBatchSource
{
    private int _taken;

    public PrefetchPressure Pressure => inner.Pressure;

    public long SnapshotEtag => inner.SnapshotEtag;

    public string? HandedOutThrough => inner.HandedOutThrough;

    public PrefetchPipeline? Pipeline => inner.Pipeline;

    public async ValueTask<PrefetchBatch?> TakeAsync(int maxDocuments, long maxBytes, CancellationToken cancellationToken = default)
    {
        var batch = await inner.TakeAsync(maxDocuments, maxBytes, cancellationToken).ConfigureAwait(false);
        if (batch is not null && Interlocked.Exchange(ref _taken, 1) == 0)
        {
            firstBatchTaken();
        }

        return batch;
    }

    public ValueTask DisposeAsync() => inner.DisposeAsync();
}
