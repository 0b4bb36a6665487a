namespace Indexing.Prefetcher.Tests;

/// <summary>
/// Feeds a <see cref="ConcurrencyController"/> one tick (250 ms unless set) at a time from a simple model of
/// the readers: by default each of L readers delivers 50 MB/s, ten reads of 1 MiB (64 documents)
/// complete per tick at 4 ms each, the indexer is starved (waits the whole tick) and nothing else
/// is going on. Tests adjust the signals per tick.
/// </summary>
internal sealed class ControllerDriver(ControllerOptions options, RememberedConcurrency? remembered = null)
{
    public const long MiB = 1024 * 1024;

    public static readonly TimeSpan TickLength = TimeSpan.FromMilliseconds(250);

    public ConcurrencyController Controller { get; } = new(options, remembered);

    /// <summary>Length of every tick this driver feeds.</summary>
    public TimeSpan TickDuration { get; init; } = TickLength;

    public TimeSpan Now { get; private set; }

    /// <summary>Delivered bytes per second as a function of L.</summary>
    public Func<int, double> BytesPerSecondAt { get; set; } = l => 50e6 * l;

    public List<(TimeSpan At, ControllerDecision Decision)> Decisions { get; } = [];

    /// <summary><paramref name="count"/> reads of <paramref name="bytes"/> in <paramref name="documents"/> documents, each taking <paramref name="latency"/>.</summary>
    public static ReadSample[] Reads(int count, long bytes, TimeSpan latency, int documents = 64) =>
        [.. Enumerable.Repeat(new ReadSample(bytes, documents, latency), count)];

    /// <summary>Ten 1 MiB reads taking <paramref name="milliseconds"/> each.</summary>
    public static ReadSample[] Reads(double milliseconds) => Reads(10, MiB, TimeSpan.FromMilliseconds(milliseconds));

    public ControllerDecision Tick(Func<ControllerSignals, ControllerSignals>? adjust = null)
    {
        Now += TickDuration;
        var signals = new ControllerSignals
        {
            Now = Now,
            TickDuration = TickDuration,
            BytesDelivered = (long)(BytesPerSecondAt(Controller.Concurrency) * TickDuration.TotalSeconds),
            Reads = Reads(4),
            ConsumerWaitFraction = 1,
            BudgetBytes = 1L << 30,
        };
        var decision = Controller.Decide(adjust?.Invoke(signals) ?? signals);
        Decisions.Add((Now, decision));
        return decision;
    }

    /// <summary>Ticks until a decision's reason starts with <paramref name="reason"/>; throws if none does within <paramref name="limit"/>.</summary>
    public ControllerDecision TickUntil(string reason, TimeSpan limit)
    {
        for (var end = Now + limit; Now < end;)
        {
            if (Tick() is var decision && decision.Reason.StartsWith(reason, StringComparison.Ordinal))
            {
                return decision;
            }
        }
        throw new TimeoutException($"no decision '{reason}...' within {limit}; the last: '{Decisions[^1].Decision.Reason}'");
    }

    /// <summary>Ticks for <paramref name="duration"/>; returns the decisions made meanwhile.</summary>
    public List<(TimeSpan At, ControllerDecision Decision)> Run(TimeSpan duration, Func<ControllerSignals, ControllerSignals>? adjust = null)
    {
        var first = Decisions.Count;
        var end = Now + duration;
        while (Now < end)
        {
            Tick(adjust);
        }
        return Decisions[first..];
    }
}
