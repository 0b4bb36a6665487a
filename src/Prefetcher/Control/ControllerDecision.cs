namespace Indexing.Prefetcher;

internal enum ControllerDecisionKind
{
    /// <summary>The first decision: the initial L (or the limit, if lower).</summary>
    Start,

    Grow,

    Cut,

    /// <summary>L stays, or steps back to where a probe that did not pay started.</summary>
    Hold,
}

/// <summary>What the controller decided for the next tick: L, a reason for people, and the next task's size.</summary>
internal readonly record struct ControllerDecision(
    int Concurrency,
    ControllerDecisionKind Kind,
    string Reason,
    long TargetTaskBytes,
    bool ThrottledByForeground);

internal static class ControllerDecisionKindNames
{
    /// <summary>The kind as the pressure view and admin page show it: "start", "grow", "cut", "hold".</summary>
    public static string Name(this ControllerDecisionKind kind) => kind.ToString().ToLowerInvariant();
}

/// <summary>One tick's choice inside the controller: L, the kind and reason shown to people, and its cause.</summary>
internal readonly record struct ControllerStep(int Concurrency, ControllerDecisionKind Kind, string Reason, DecisionCause Cause);

/// <summary>Why a decision was made, coarser than its reason text: decides what the history keeps.</summary>
internal enum DecisionCause
{
    Start,
    Limit,
    Sizes,
    Foreground,
    Queueing,
    Indexer,
    Memory,
    RateLimit,
    Cooldown,
    Measure,
    Plateau,
    Probe,
}

/// <summary>What a rule's decision does to the hill climb (see <see cref="HillClimber.Apply"/>).</summary>
internal enum ClimbEffect
{
    None,

    /// <summary>A hold for an outside reason: measuring starts over, a plateau in progress stays.</summary>
    Pause,

    /// <summary>L changed for a reason that says nothing about the device (a limit): measure afresh, probe upwards.</summary>
    Restart,

    /// <summary>The first tick, or a limit that pinned L was raised: measure afresh and grow multiplicatively.</summary>
    RestartInSlowStart,

    /// <summary>A foreground cut: measure afresh, probe upwards one step at a time.</summary>
    RestartAfterCut,

    /// <summary>A queueing cut: L may still be too high, so the next probe looks downwards.</summary>
    RestartProbingDown,

    /// <summary>
    /// The first tick at an L remembered for the device (<see cref="PrefetchDevice"/>): measure it and
    /// probe a fine step up, as after a plateau, not slow start (which would double past the knee).
    /// </summary>
    StartRemembered,
}
