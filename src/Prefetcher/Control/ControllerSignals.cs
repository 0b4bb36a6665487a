namespace Indexing.Prefetcher;

/// <summary>What the prefetcher measured during one controller tick: counters over the tick, levels at its end.</summary>
internal readonly record struct ControllerSignals
{
    /// <summary>End of the tick, as time since the pipeline started.</summary>
    public required TimeSpan Now { get; init; }

    /// <summary>Length of the tick (jittered; the controller works with the real length).</summary>
    public required TimeSpan TickDuration { get; init; }

    /// <summary>Bytes of documents whose reads completed during the tick.</summary>
    public long BytesDelivered { get; init; }

    public ReadOnlyMemory<ReadSample> Reads { get; init; }

    /// <summary>Reads in flight integrated over the tick (two for the whole tick: twice its length); zero when not measured.</summary>
    public TimeSpan ReadsInFlightTime { get; init; }

    /// <summary>Share of the tick (0..1) the indexer spent waiting for input.</summary>
    public double ConsumerWaitFraction { get; init; }

    public long BufferedBytes { get; init; }

    public long InFlightBytes { get; init; }

    public long BudgetBytes { get; init; }

    /// <summary>The largest document of the size histogram's recent window; 0 when none.</summary>
    public long LargestRecentDocumentBytes { get; init; }

    /// <summary>The process is under memory pressure: do not add readers.</summary>
    public bool MemoryHigh { get; init; }

    /// <summary>The store's live p99 latency of foreground Gets: positive, or null when there were none.</summary>
    public TimeSpan? ForegroundP99 { get; init; }

    /// <summary>The max MB/s setting, not the disk, is what limits reads now.</summary>
    public bool RateLimited { get; init; }

    /// <summary>The live concurrency limit (with the device's share, when others read it too); null: only <see cref="ControllerOptions.MaxConcurrency"/> applies.</summary>
    public int? MaxConcurrency { get; init; }

    /// <summary>Adaptive prefetches reading the device now, this one included (0 or 1: alone); above 1, <see cref="MaxConcurrency"/> holds this one's share.</summary>
    public int DeviceReaders { get; init; }

    /// <summary>Throws, naming the signal, when one cannot be right: a bug in the caller (<paramref name="lastNow"/>: the last tick's time).</summary>
    public void Check(TimeSpan? lastNow)
    {
        if (TickDuration <= TimeSpan.Zero)
        {
            throw new ArgumentException($"TickDuration must be positive (was {TickDuration}).", "signals");
        }
        if (lastNow is { } last && Now < last)
        {
            throw new ArgumentException($"Now went backwards ({Now} after {last}).", "signals");
        }
        if (ConsumerWaitFraction is not (>= 0 and <= 1))
        {
            throw new ArgumentException($"ConsumerWaitFraction must be in [0, 1] (was {ConsumerWaitFraction}).", "signals");
        }
        NotNegative(BytesDelivered, nameof(BytesDelivered));
        NotNegative(BufferedBytes, nameof(BufferedBytes));
        NotNegative(InFlightBytes, nameof(InFlightBytes));
        NotNegative(BudgetBytes, nameof(BudgetBytes));
        NotNegative(LargestRecentDocumentBytes, nameof(LargestRecentDocumentBytes));
        foreach (var read in Reads.Span)
        {
            NotNegative(read.Bytes, "Reads[].Bytes");
            NotNegative(read.Documents, "Reads[].Documents");
            NotNegative(read.Latency, "Reads[].Latency");
        }
        NotNegative(ReadsInFlightTime, nameof(ReadsInFlightTime));
        if (ForegroundP99 is { } p99 && p99 <= TimeSpan.Zero)
        {
            // Taken as a measurement, an empty window's p99 of zero would become the idle baseline,
            // make the target zero and hold L at 1 for the whole window.
            throw new ArgumentOutOfRangeException(
                "signals", p99, $"ForegroundP99 must be positive (was {p99}); pass null when the window has no samples.");
        }
        if (MaxConcurrency is < 1)
        {
            throw new ArgumentException($"MaxConcurrency must be at least 1 (was {MaxConcurrency}).", "signals");
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

/// <summary>
/// One completed read as the controller sees it, its latency from issue to completion;
/// <paramref name="Ramp"/>: one of the run's first tasks, cut below the target (<see cref="ReadTask.Ramp"/>).
/// </summary>
internal readonly record struct ReadSample(long Bytes, int Documents, TimeSpan Latency, bool Ramp = false);
