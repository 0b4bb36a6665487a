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
/// It also keeps the last <see cref="FinishedKept"/> that ended, as each one's final pressure (taken
/// when its registration is disposed), so that an admin page opened after a rebuild still shows how
/// its prefetch went. Only the pressure record is kept, never the source.
/// </para>
/// <para>
/// Threading: any thread. Readers get an array that is never changed after publication, with one field read, so the one-second
/// SSE loop and metric scrapes never contend with registrations.
/// </para>
/// </summary>
internal sealed class PrefetchRegistry(Action<string, RebuildPhase>? phaseEntered = null) : IRebuildObserver
{
    /// <summary>
    /// How many finished prefetches are kept. Four: with the default two rebuilds at once, the last two
    /// rounds of them (or a round and the demo's pass), which is what someone looking after a rebuild
    /// asks about; each costs only its final pressure (about 300 history points and 50 decisions, tens
    /// of KiB), and the admin page stays short.
    /// </summary>
    public const int FinishedKept = 4;

    private readonly Lock _lock = new();
    private RegisteredPrefetch[] _running = [];
    private PrefetchPressure[] _finished = [];

    /// <summary>Every registered prefetch, in registration order.</summary>
    public IReadOnlyList<RegisteredPrefetch> Running => Volatile.Read(ref _running);

    /// <summary>
    /// The last <see cref="FinishedKept"/> prefetches whose registration ended, newest first: each one's
    /// final pressure, named as registered, with <see cref="PrefetchPressure.State"/> how it ended
    /// (Completed, Cancelled or Failed; one whose owner stopped it before its end is Cancelled) and
    /// <see cref="PrefetchPressure.Timestamp"/> when.
    /// </summary>
    public IReadOnlyList<PrefetchPressure> Finished => Volatile.Read(ref _finished);

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
        var final = Final(entry.Source.Describe(entry.Name), DateTimeOffset.UtcNow);
        lock (_lock)
        {
            Volatile.Write(ref _running, [.. _running.Where(r => !ReferenceEquals(r, entry))]);
            Volatile.Write(ref _finished, [final, .. _finished.Take(FinishedKept - 1)]);
        }
    }

    // A registration usually ends before its owner disposes the source, so a prefetch stopped early
    // (its consumer cancelled or failed) still reads Planning or Running: it ends Cancelled, as it
    // will once disposed.
    private static PrefetchPressure Final(PrefetchPressure pressure, DateTimeOffset finishedAt) => pressure with
    {
        State = pressure.State is PrefetchState.Planning or PrefetchState.Running ? PrefetchState.Cancelled : pressure.State,
        Timestamp = finishedAt,
    };

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
