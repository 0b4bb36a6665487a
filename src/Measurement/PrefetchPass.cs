using Indexing.Engine;
using Indexing.Prefetcher;

namespace Indexing.Measurement;

/// <summary>
/// A read-only prefetch pass over one collection of a running engine, as the demo shows it: the chosen
/// strategy reads the whole collection, optionally through the modelled network disk, into a
/// <see cref="CountingSink"/>, with no index behind it. The pass is registered with the engine while it
/// runs, so a host's admin page and metrics show it beside the rebuilds' prefetches
/// (<see cref="IndexingEngine.ListPrefetches"/>). Measurement, not part of the engine's API: it starts the
/// prefetcher over the engine's store directly (this assembly's grant).
/// </summary>
public sealed class PrefetchPass : IAsyncDisposable
{
    private readonly IBatchSource _source;
    private readonly IDisposable _registration;

    private PrefetchPass(IBatchSource source, IDisposable registration, string strategy, long budgetBytes, string readsFrom)
    {
        _source = source;
        _registration = registration;
        Strategy = strategy;
        BudgetBytes = budgetBytes;
        ReadsFrom = readsFrom;
    }

    /// <summary>The strategies a pass can read with, by name: adaptive, fixed-batch, sequential.</summary>
    public static IReadOnlyList<string> Strategies => PrefetchStrategyNames.All;

    /// <summary>The name of the adaptive strategy, the default.</summary>
    public const string AdaptiveStrategy = PrefetchStrategyNames.Adaptive;

    /// <summary>The strategy's name.</summary>
    public string Strategy { get; }

    /// <summary>The pass's byte budget: in flight plus buffered never exceed it.</summary>
    public long BudgetBytes { get; }

    /// <summary>Where it reads, for a message: "from the local disk", or "through the" modelled disk with its figures.</summary>
    public string ReadsFrom { get; }

    /// <summary>The pass's pressure now.</summary>
    public PrefetchPressure Pressure => _source.Pressure;

    /// <summary>
    /// Starts reading <paramref name="collection"/> of <paramref name="engine"/>'s store with <paramref name="strategy"/>
    /// (one of <see cref="Strategies"/>) from <paramref name="device"/>, registered as <paramref name="name"/>. The
    /// adaptive strategy backs off on the store's foreground Get latency, as a rebuild's does.
    /// </summary>
    public static PrefetchPass Start(IndexingEngine engine, string collection, string strategy, RebuildDevice device, string name, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(engine);
        ArgumentNullException.ThrowIfNull(device);
        if (!Strategies.Contains(strategy))
        {
            throw new ArgumentException($"unknown prefetch strategy {MessageText.Quote(strategy)}; use one of {string.Join(", ", Strategies)}.", nameof(strategy));
        }

        var store = engine.Store;
        // The engine's budget and device memory: the pass counts against the same bound as rebuilds.
        var options = engine.PrefetchOptions with { ForegroundLatency = store.ForegroundReadLatency };
        var model = device.NetworkDisk is { } disk ? new NetworkDiskModel(disk) : null;
        var source = Prefetch.Start(store, collection, PrefetchStrategyNames.Parse(strategy), options, model, cancellationToken: cancellationToken);
        try
        {
            var readsFrom = model is null ? "from the local disk" : $"through the {model.Options}";
            return new PrefetchPass(source, engine.Prefetches.Register(name, source), strategy, options.BudgetBytes, readsFrom);
        }
        catch
        {
            source.DisposeAsync().AsTask().GetAwaiter().GetResult();
            throw;
        }
    }

    /// <summary>Takes every document the pass reads into <paramref name="sink"/>, until the collection ends.</summary>
    public Task DrainAsync(CountingSink sink, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(sink);
        return sink.DrainAsync(_source, cancellationToken);
    }

    /// <summary>Stops reading and unregisters the pass.</summary>
    public async ValueTask DisposeAsync()
    {
        _registration.Dispose();
        await _source.DisposeAsync().ConfigureAwait(false);
    }
}
