namespace Indexing.Prefetcher;

/// <summary>How a prefetcher schedules its reads; all three read through the same code.</summary>
internal enum PrefetchStrategy
{
    /// <summary>Parallel byte-balanced reads, L set by the controller, whatever is ready handed out.</summary>
    Adaptive,

    /// <summary>Baseline: fixed-count batches, one read ahead of the consumer.</summary>
    FixedBatch,

    /// <summary>Baseline: fixed-count batches read only when the consumer asks (no overlap).</summary>
    Sequential,
}

/// <summary>The names strategies go by on command lines, in JSON and in the pressure view.</summary>
internal static class PrefetchStrategyNames
{
    public const string Adaptive = "adaptive";
    public const string FixedBatch = "fixed-batch";
    public const string Sequential = "sequential";

    /// <summary>Every name, in declaration order.</summary>
    public static IReadOnlyList<string> All { get; } = [Adaptive, FixedBatch, Sequential];

    /// <summary>The strategy's name.</summary>
    public static string ToName(this PrefetchStrategy strategy) => strategy switch
    {
        PrefetchStrategy.Adaptive => Adaptive,
        PrefetchStrategy.FixedBatch => FixedBatch,
        PrefetchStrategy.Sequential => Sequential,
        _ => throw new ArgumentOutOfRangeException(nameof(strategy), strategy, $"strategy {(int)strategy} is not a PrefetchStrategy."),
    };

    /// <summary>The strategy named <paramref name="name"/>; throws <see cref="ArgumentException"/> naming the choices otherwise.</summary>
    public static PrefetchStrategy Parse(string name) => name switch
    {
        Adaptive => PrefetchStrategy.Adaptive,
        FixedBatch => PrefetchStrategy.FixedBatch,
        Sequential => PrefetchStrategy.Sequential,
        _ => throw new ArgumentException($"strategy {MessageText.Quote(name)} is not known; use one of: {string.Join(", ", All)}.", nameof(name)),
    };
}
