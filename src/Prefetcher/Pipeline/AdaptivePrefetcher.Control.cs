using System.Collections.Immutable;
using System.Runtime.CompilerServices;

namespace Indexing.Prefetcher;

// The tick: builds the controller's signals from what the tick measured, applies its decision
// (L to the gate, task size to the planner), and supplies the pressure view. Runs on the tick loop;
// View may also run on the thread that ends the run, so what it reads is published atomically.
public sealed partial class AdaptivePrefetcher
{
    private StrongBox<ControllerDecision>? _lastDecision;
    private long _foregroundP99Ticks = -1;
    private DecisionsCopy? _publicDecisions;

    private void OnTick()
    {
        var tick = _run.Meter.Tick(_gate.Limit);
        var foreground = ForegroundP99();
        Volatile.Write(ref _foregroundP99Ticks, foreground?.Ticks ?? -1);
        if (_run.State is not (PrefetchState.Planning or PrefetchState.Running))
        {
            return;
        }

        var budget = _run.Budget.Snapshot();
        var limits = Limits;
        var decision = _controller.Decide(new ControllerSignals
        {
            Now = tick.Now,
            TickDuration = tick.Duration,
            BytesDelivered = tick.BytesRead,
            DocumentsDelivered = tick.DocumentsRead,
            Reads = tick.Reads,
            ReadsInFlightTime = tick.ReadsInFlightTime,
            ConsumerWaitFraction = tick.ConsumerWaitFraction,
            BufferedBytes = budget.BufferedBytes,
            InFlightBytes = budget.InFlightBytes,
            BudgetBytes = budget.Limit,
            LargestRecentDocumentBytes = _run.Meter.Sizes.Snapshot().Max,
            MemoryHigh = IsMemoryHigh(),
            ForegroundP99 = foreground,
            RateLimited = tick.RateLimited,
            MaxConcurrency = limits.MaxConcurrency,
        });
        Volatile.Write(ref _lastDecision, new StrongBox<ControllerDecision>(decision));
        Volatile.Write(ref _targetTaskBytes, decision.TargetTaskBytes);
        lock (_limitsLock)
        {
            _decidedConcurrency = decision.Concurrency;
            _gate.SetLimit(EffectiveConcurrency(decision.Concurrency, _limits));
        }
    }

    private PressureView View()
    {
        var foregroundTicks = Volatile.Read(ref _foregroundP99Ticks);
        var decisions = PublicDecisions(_controller.History);

        return new PressureView(
            _gate.Running,
            _gate.Limit,
            Limits.MaxBytesPerSecond,
            foregroundTicks < 0 ? null : TimeSpan.FromTicks(foregroundTicks),
            Volatile.Read(ref _lastDecision)?.Value,
            decisions);
    }

    // The controller's history changes only when it records a decision (a new array each time),
    // so the public copy is rebuilt only then, not on every publish.
    private ImmutableArray<PrefetchDecisionEntry> PublicDecisions(ImmutableArray<ControllerHistoryEntry> history)
    {
        var cached = Volatile.Read(ref _publicDecisions);
        if (cached is not null && cached.Source == history)
        {
            return cached.Entries;
        }

        var entries = ImmutableArray.CreateBuilder<PrefetchDecisionEntry>(history.Length);
        foreach (var entry in history)
        {
            entries.Add(new PrefetchDecisionEntry(entry.At, entry.Concurrency, entry.Kind.Name(), entry.Reason));
        }

        var built = new DecisionsCopy(history, entries.MoveToImmutable());
        Volatile.Write(ref _publicDecisions, built);
        return built.Entries;
    }

    private TimeSpan? ForegroundP99() => ForegroundSignal.P99(_options.ForegroundLatency);

    // The GC's own notion of "high memory load" (90% of the machine or container limit by default).
    private static bool IsMemoryHigh()
    {
        var info = GC.GetGCMemoryInfo();
        return info.HighMemoryLoadThresholdBytes > 0 && info.MemoryLoadBytes >= info.HighMemoryLoadThresholdBytes;
    }

    private sealed record DecisionsCopy(ImmutableArray<ControllerHistoryEntry> Source, ImmutableArray<PrefetchDecisionEntry> Entries);
}
