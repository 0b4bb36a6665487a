using Indexing.Indexer;
using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Engine;

/// <summary>
/// The prefetches running in this server, by name, for the admin endpoints and metrics. Whoever
/// starts a prefetch (the demo, a rebuild) registers it and disposes the registration when done;
/// the registry never owns or disposes the sources themselves. As the index manager's
/// <see cref="IRebuildObserver"/>, it registers each rebuild's bulk prefetch as <c>rebuild &lt;index&gt;</c>.
/// <para>
/// Threading: any thread. Readers get an array that is never changed after publication, with one field read, so the one-second
/// SSE loop and metric scrapes never contend with registrations.
/// </para>
/// </summary>
internal sealed class PrefetchRegistry(Action<string, RebuildPhase>? phaseEntered = null) : IRebuildObserver
{
    private readonly Lock _lock = new();
    private RegisteredPrefetch[] _running = [];

    /// <summary>Every registered prefetch, in registration order.</summary>
    public IReadOnlyList<RegisteredPrefetch> Running => Volatile.Read(ref _running);

    /// <summary>
    /// Registers <paramref name="source"/> under <paramref name="name"/> until the returned handle is
    /// disposed. Throws <see cref="InvalidOperationException"/> when the name is taken: two rebuilds
    /// of one index at once would be a caller bug, and the admin API addresses prefetches by name.
    /// </summary>
    public IDisposable Register(string name, IBatchSource source)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        ArgumentNullException.ThrowIfNull(source);
        var entry = new RegisteredPrefetch(name, source);
        lock (_lock)
        {
            if (_running.Any(r => r.Name == name))
            {
                throw new InvalidOperationException(
                    $"a prefetch named {MessageText.Quote(name)} is already registered; dispose its registration first or pick another name.");
            }

            Volatile.Write(ref _running, [.. _running, entry]);
        }

        return new Registration(this, entry);
    }

    /// <summary>Registers a rebuild's bulk prefetch as <c>rebuild &lt;index&gt;</c> until its bulk phase ends.</summary>
    public IDisposable? BulkStarted(string indexName, IBatchSource source) => Register(RebuildPrefetchName(indexName), source);

    /// <summary>The name a rebuild's bulk prefetch is registered under.</summary>
    public static string RebuildPrefetchName(string indexName) => RebuildRun.PrefetchName(indexName);

    /// <summary>Passes each rebuild's phase on to the engine's events.</summary>
    public void PhaseEntered(string indexName, RebuildPhase phase) => phaseEntered?.Invoke(indexName, phase);

    /// <summary>The prefetch registered under <paramref name="name"/>, or null.</summary>
    public RegisteredPrefetch? Find(string name) => Running.FirstOrDefault(r => r.Name == name);

    private void Unregister(RegisteredPrefetch entry)
    {
        lock (_lock)
        {
            Volatile.Write(ref _running, [.. _running.Where(r => !ReferenceEquals(r, entry))]);
        }
    }

    private sealed class Registration(PrefetchRegistry registry, RegisteredPrefetch entry) : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                registry.Unregister(entry);
            }
        }
    }
}

/// <summary>One registered prefetch: its name and the source, whose pressure and limits the admin API reads.</summary>
internal sealed record RegisteredPrefetch(string Name, IBatchSource Source)
{
    /// <summary>The adaptive prefetcher behind the source, whose live limits the admin API changes; null for the baselines.</summary>
    public PrefetchPipeline? Adaptive => Source.Adaptive();
}
