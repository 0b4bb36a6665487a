using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>The names strategies go by on command lines, in JSON and in the pressure view ("adaptive", "fixed-batch", "sequential").</summary>
public static class PrefetchStrategyNames
{
    private static readonly (string Name, PrefetchStrategy Strategy)[] _names =
    [
        (AdaptivePrefetcher.StrategyName, PrefetchStrategy.Adaptive),
        (FixedBatchPrefetcher.StrategyName, PrefetchStrategy.FixedBatch),
        (SequentialPrefetcher.StrategyName, PrefetchStrategy.Sequential),
    ];

    /// <summary>Every name, in declaration order.</summary>
    public static IReadOnlyList<string> All { get; } = Array.ConvertAll(_names, n => n.Name);

    /// <summary>The strategy's name.</summary>
    public static string ToName(this PrefetchStrategy strategy)
    {
        foreach (var (name, value) in _names)
        {
            if (value == strategy)
            {
                return name;
            }
        }

        throw new ArgumentOutOfRangeException(nameof(strategy), strategy, $"strategy {(int)strategy} is not a PrefetchStrategy.");
    }

    /// <summary>The strategy named <paramref name="name"/>; throws <see cref="ArgumentException"/> naming the choices otherwise.</summary>
    public static PrefetchStrategy Parse(string name)
    {
        foreach (var (known, value) in _names)
        {
            if (string.Equals(known, name, StringComparison.Ordinal))
            {
                return value;
            }
        }

        throw new ArgumentException($"strategy {MessageText.Quote(name)} is not known; use one of: {string.Join(", ", All)}.", nameof(name));
    }
}
