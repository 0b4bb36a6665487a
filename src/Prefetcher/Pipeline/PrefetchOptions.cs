using Indexing.Storage;

using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher;

/// <summary>
/// Settings of a prefetcher, fixed when it starts except <see cref="PrefetchLimits"/>, which start
/// from <see cref="BudgetBytes"/> and <see cref="MaxBytesPerSecond"/> (task cutting keeps to the
/// starting budget).
/// </summary>
internal sealed record PrefetchOptions
{
    public const long DefaultBudgetBytes = 256L * 1024 * 1024;

    /// <summary>Documents per fixed-count batch of the baselines unless set: a typical fixed batch size.</summary>
    public const int DefaultBaselineBatchDocuments = 1024;

    /// <summary>Bytes in flight plus bytes read but not yet taken never exceed this (starting value; live).</summary>
    public long BudgetBytes { get; init; } = DefaultBudgetBytes;

    /// <summary>How often the controller decides; each interval is jittered by ± <see cref="TickJitterFraction"/>.</summary>
    public TimeSpan TickInterval { get; init; } = TimeSpan.FromMilliseconds(250);

    /// <summary>
    /// When the first tick comes (jittered too; never later than <see cref="TickInterval"/>). Sooner
    /// than the others: until it, L is the initial 2, which on a slow device (8 MB/s a stream)
    /// starves a rebuild's indexer for the whole tick. Not much sooner: the first tick measures the
    /// initial L on the run's first, shortest tasks, and on fewer of them that rate comes out low, the
    /// first step looks better than it is, and a capped device's L runs past its knee
    /// (docs/decisions/0008).
    /// </summary>
    public TimeSpan FirstTickInterval { get; init; } = TimeSpan.FromMilliseconds(150);

    /// <summary>Jitter keeps ticks from locking step with periodic work on the machine (0.1 = ±10%).</summary>
    public double TickJitterFraction { get; init; } = 0.1;

    /// <summary>The adaptive controller's tuning; its MaxConcurrency is also the number of reader threads at most.</summary>
    public ControllerOptions Controller { get; init; } = new();

    /// <summary>
    /// The byte budget every prefetch of the engine draws from besides its own <see cref="BudgetBytes"/>
    /// (one per engine: all of them together hold at most its budget); null: this prefetch's own only.
    /// </summary>
    public SharedPrefetchBudget? SharedBudget { get; init; }

    /// <summary>
    /// The engine's devices: <see cref="Prefetch.Start"/> finds the one it reads in it, which starts an
    /// adaptive prefetch where the last one reading it alone settled and splits its L between
    /// prefetches reading it at once (<see cref="PrefetchDevice"/>); null: every prefetch on its own.
    /// </summary>
    public PrefetchDevices? Devices { get; init; }

    /// <summary>The store's foreground read latencies: when set, reads back off if foreground p99 suffers.</summary>
    public LatencyHistogram? ForegroundLatency { get; init; }

    /// <summary>Cap on bytes read per second (starting value; live); null = no cap.</summary>
    public long? MaxBytesPerSecond { get; init; }

    /// <summary>How much per-second history the pressure snapshot keeps.</summary>
    public TimeSpan HistoryLength { get; init; } = TimeSpan.FromMinutes(5);

    /// <summary>Half-life of the document-size histogram (recent sizes weigh more).</summary>
    public TimeSpan SizeHalfLife { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>Documents per batch of the two baselines (FixedBatch, Sequential), whatever their bytes; the adaptive prefetcher ignores it.</summary>
    public int BaselineBatchDocuments { get; init; } = DefaultBaselineBatchDocuments;

    /// <summary>When the first tick comes, before jitter: <see cref="FirstTickInterval"/>, at most <see cref="TickInterval"/>.</summary>
    public TimeSpan FirstTick => FirstTickInterval < TickInterval ? FirstTickInterval : TickInterval;

    /// <summary>The live limits a prefetcher starts with.</summary>
    public PrefetchLimits InitialLimits => new() { BudgetBytes = BudgetBytes, MaxBytesPerSecond = MaxBytesPerSecond };

    /// <summary>Runs <see cref="PrefetchOptionsValidator"/>: throws <see cref="OptionsValidationException"/> naming every invalid setting; returns this.</summary>
    public PrefetchOptions Validate() => OptionProblems.ThrowIfInvalid(new PrefetchOptionsValidator(), this);

    public override string ToString()
    {
        var foreground = ForegroundLatency is null ? "no foreground latency signal" : "foreground latency watched";
        var shared = SharedBudget is { } budget ? $" within a shared budget of {ByteSize.Format(budget.BudgetBytes)}" : "";
        return $"prefetch: {InitialLimits}{shared}; tick {ControlText.Duration(TickInterval)} ±{ControlText.Percent(TickJitterFraction)} (the first at {ControlText.Duration(FirstTick)}), " +
            $"size half-life {ControlText.Duration(SizeHalfLife)}, history {ControlText.Duration(HistoryLength)}, {foreground}, " +
            $"baselines read {BaselineBatchDocuments} documents per batch; {Controller}";
    }
}

/// <summary>The rules of <see cref="PrefetchOptions"/>, its controller's and starting limits' included.</summary>
internal sealed class PrefetchOptionsValidator : IValidateOptions<PrefetchOptions>
{
    public ValidateOptionsResult Validate(string? name, PrefetchOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems(nameof(PrefetchOptions) + ".");
        problems.Require(options.TickInterval >= TimeSpan.FromMilliseconds(10) && options.TickInterval <= TimeSpan.FromSeconds(10),
            ControlText.Invariant($"{nameof(options.TickInterval)} must be in [10 ms, 10 s] (was {options.TickInterval})"));
        problems.Require(options.FirstTickInterval >= TimeSpan.FromMilliseconds(10) && options.FirstTickInterval <= TimeSpan.FromSeconds(10),
            ControlText.Invariant($"{nameof(options.FirstTickInterval)} must be in [10 ms, 10 s] (was {options.FirstTickInterval})"));
        problems.InRange(options.TickJitterFraction, 0, 0.5, nameof(options.TickJitterFraction));
        problems.Require(options.HistoryLength >= TimeSpan.FromSeconds(10) && options.HistoryLength <= TimeSpan.FromHours(1),
            ControlText.Invariant($"{nameof(options.HistoryLength)} must be in [10 s, 1 h] (was {options.HistoryLength})"));
        problems.Positive(options.SizeHalfLife, nameof(options.SizeHalfLife));
        problems.InRange(options.BaselineBatchDocuments, 1, PlanOptions.DefaultMaxDocumentsPerTask * 256, nameof(options.BaselineBatchDocuments));
        problems.Require(options.Controller is not null, $"{nameof(options.Controller)} must be set");
        if (options.Controller is { } controller)
        {
            problems.Include(new ControllerOptionsValidator().Validate(name, controller));
            PrefetchLimitsValidator.AddProblems(problems, options.InitialLimits, controller.MaxConcurrency);
        }

        return problems.Result;
    }
}
