using Indexing.Storage;

namespace Indexing.Prefetcher;

/// <summary>
/// The settings of a running prefetcher that an operator may change live (like a rethrottle):
/// read the current ones, change them with <c>with</c>, and pass them to <c>UpdateLimits</c>.
/// Lowering never revokes what is already running or held: running reads finish, held bytes stay
/// until taken; only new reads wait.
/// </summary>
public sealed record PrefetchLimits
{
    /// <summary>Bytes in flight plus bytes read but not yet taken.</summary>
    public required long BudgetBytes { get; init; }

    /// <summary>
    /// Cap on concurrent reads below the controller's fixed maximum (ControllerOptions.MaxConcurrency,
    /// set at start: it bounds the reader threads, so it cannot be raised live); null = that maximum.
    /// </summary>
    public int? MaxConcurrency { get; init; }

    /// <summary>Cap on bytes read per second (decimal MB/s x 10^6); null = no cap.</summary>
    public long? MaxBytesPerSecond { get; init; }

    public override string ToString()
    {
        var concurrency = MaxConcurrency is { } max ? $"max concurrency {max}" : "concurrency up to the controller's maximum";
        var rate = MaxBytesPerSecond is { } bytesPerSecond ? $"max {ControlText.Rate(bytesPerSecond)}" : "no MB/s cap";
        return $"budget {ByteSize.Format(BudgetBytes)}, {concurrency}, {rate}";
    }

    internal PrefetchLimits Validate(int fixedMaxConcurrency)
    {
        var problems = new OptionProblems(nameof(PrefetchLimits));
        AddProblems(problems, fixedMaxConcurrency);
        problems.ThrowIfAny();
        return this;
    }

    internal void AddProblems(OptionProblems problems, int fixedMaxConcurrency)
    {
        problems.Require(BudgetBytes >= 1, $"{nameof(BudgetBytes)} must be at least 1 byte (was {BudgetBytes})");
        problems.Require(MaxConcurrency is null || (MaxConcurrency >= 1 && MaxConcurrency <= fixedMaxConcurrency),
            $"{nameof(MaxConcurrency)} must be in [1, {fixedMaxConcurrency}] (was {MaxConcurrency}); " +
            $"the upper end is ControllerOptions.MaxConcurrency, fixed at start");
        problems.Require(MaxBytesPerSecond is null or >= 1, $"{nameof(MaxBytesPerSecond)} must be at least 1 when set (was {MaxBytesPerSecond})");
    }
}
