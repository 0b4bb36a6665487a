namespace Indexing.Prefetcher;

internal enum ControllerDecisionKind
{
    /// <summary>The first decision: concurrency is the configured initial value (the limit, if that is lower).</summary>
    Start,

    /// <summary>Concurrency went up: a probe upwards (doubling in slow start, else by one).</summary>
    Grow,

    /// <summary>Concurrency went down: a limit, the foreground, queueing, or a downward probe.</summary>
    Cut,

    /// <summary>
    /// Concurrency stays, or steps back towards where a probe started because the probe did not pay
    /// (fully): down after an upward probe (to the knee it showed, in slow start), up after a
    /// downward one (never above the limit).
    /// </summary>
    Hold,
}

/// <summary>
/// What the controller decided for the next tick. <see cref="Reason"/> is one line for people
/// ("cut: foreground p99 4.1 ms > 2.6 ms"); <see cref="TargetTaskBytes"/> is what the planner
/// should aim for when it cuts the next read task.
/// </summary>
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
