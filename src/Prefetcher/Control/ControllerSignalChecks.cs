namespace Indexing.Prefetcher;

/// <summary>
/// The controller's input checks: a signal that cannot be right (time going backwards, a negative
/// count, a zero p99) is a bug in the caller and throws, naming the signal, before anything is
/// learned from it.
/// </summary>
internal static class ControllerSignalChecks
{
    /// <param name="signals">This tick's signals.</param>
    /// <param name="lastNow">The previous tick's time; null before the first tick.</param>
    public static void Check(in ControllerSignals signals, TimeSpan? lastNow)
    {
        var s = signals;
        if (s.TickDuration <= TimeSpan.Zero)
        {
            throw new ArgumentException($"TickDuration must be positive (was {s.TickDuration}).", nameof(signals));
        }
        if (lastNow is { } last && s.Now < last)
        {
            throw new ArgumentException($"Now went backwards ({s.Now} after {last}).", nameof(signals));
        }
        if (s.ConsumerWaitFraction is not (>= 0 and <= 1))
        {
            throw new ArgumentException($"ConsumerWaitFraction must be in [0, 1] (was {s.ConsumerWaitFraction}).", nameof(signals));
        }
        NotNegative(s.BytesDelivered, nameof(s.BytesDelivered));
        NotNegative(s.BufferedBytes, nameof(s.BufferedBytes));
        NotNegative(s.InFlightBytes, nameof(s.InFlightBytes));
        NotNegative(s.BudgetBytes, nameof(s.BudgetBytes));
        NotNegative(s.LargestRecentDocumentBytes, nameof(s.LargestRecentDocumentBytes));
        foreach (var read in s.Reads.Span)
        {
            NotNegative(read.Bytes, "Reads[].Bytes");
            NotNegative(read.Documents, "Reads[].Documents");
            NotNegative(read.Latency, "Reads[].Latency");
        }
        NotNegative(s.ReadsInFlightTime, nameof(s.ReadsInFlightTime));
        if (s.ForegroundP99 is { } p99 && p99 <= TimeSpan.Zero)
        {
            // Taken as a measurement, an empty window's p99 of zero would become the idle baseline,
            // make the target zero and hold L at 1 for the whole window.
            throw new ArgumentOutOfRangeException(
                nameof(signals), p99, $"ForegroundP99 must be positive (was {p99}); pass null when the window has no samples.");
        }
        if (s.MaxConcurrency is < 1)
        {
            throw new ArgumentException($"MaxConcurrency must be at least 1 (was {s.MaxConcurrency}).", nameof(signals));
        }
    }

    private static void NotNegative<T>(T value, string name)
        where T : struct, IComparable<T>
    {
        if (value.CompareTo(default) < 0)
        {
            throw new ArgumentOutOfRangeException("signals", value, $"{name} must not be negative (was {value}).");
        }
    }
}
