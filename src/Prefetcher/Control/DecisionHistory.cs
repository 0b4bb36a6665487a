using System.Collections.Immutable;
using System.Runtime.InteropServices;

namespace Indexing.Prefetcher;

/// <summary>
/// The controller's recent decisions for the admin page: every change of L and the first of a run of
/// holds with one cause, so ~50 entries cover minutes, not 12 s of identical ticks. Measuring holds
/// are not kept. <see cref="Entries"/> is an immutable snapshot any thread may read.
/// </summary>
internal sealed class DecisionHistory
{
    public const int Capacity = 50;

    private PrefetchDecisionEntry[] _entries = [];
    private DecisionCause? _lastCause;

    /// <summary>Oldest first.</summary>
    public ImmutableArray<PrefetchDecisionEntry> Entries => ImmutableCollectionsMarshal.AsImmutableArray(Volatile.Read(ref _entries));

    /// <summary>Remembers <paramref name="step"/>, decided at <paramref name="now"/> when L was <paramref name="before"/>.</summary>
    public void Remember(TimeSpan now, ControllerStep step, int before)
    {
        if (step.Cause == DecisionCause.Measure
            || (step.Kind == ControllerDecisionKind.Hold && step.Concurrency == before && step.Cause == _lastCause))
        {
            return;
        }
        _lastCause = step.Cause;
        var kept = _entries[^Math.Min(_entries.Length, Capacity - 1)..];
        Volatile.Write(ref _entries, [.. kept, new PrefetchDecisionEntry(now, step.Concurrency, step.Kind.Name(), step.Reason)]);
    }
}
