using Indexing.Storage;

using Microsoft.Extensions.Options;

namespace Indexing.Prefetcher;

/// <summary>
/// The settings of a running prefetcher that an operator may change live (a rethrottle): change the
/// current ones with <c>with</c> and pass them to <c>UpdateLimits</c>. Lowering revokes nothing.
/// </summary>
public sealed record PrefetchLimits
{
    /// <summary>Bytes in flight plus bytes read but not yet taken.</summary>
    public required long BudgetBytes { get; init; }

    /// <summary>Cap on concurrent reads, up to ControllerOptions.MaxConcurrency (fixed at start: it bounds the threads); null = that.</summary>
    public int? MaxConcurrency { get; init; }

    /// <summary>Cap on bytes read per second (decimal MB/s x 10^6); null = no cap.</summary>
    public long? MaxBytesPerSecond { get; init; }

    public override string ToString()
    {
        var concurrency = MaxConcurrency is { } max ? $"max concurrency {max}" : "concurrency up to the controller's maximum";
        var rate = MaxBytesPerSecond is { } bytesPerSecond ? $"max {ControlText.Rate(bytesPerSecond)}" : "no MB/s cap";
        return $"budget {ByteSize.Format(BudgetBytes)}, {concurrency}, {rate}";
    }
}

/// <summary>The rules of <see cref="PrefetchLimits"/>, run by <c>UpdateLimits</c> and for the starting limits.</summary>
internal sealed class PrefetchLimitsValidator(int fixedMaxConcurrency) : IValidateOptions<PrefetchLimits>
{
    public ValidateOptionsResult Validate(string? name, PrefetchLimits options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var problems = new OptionProblems(nameof(PrefetchLimits) + ".");
        AddProblems(problems, options, fixedMaxConcurrency);
        return problems.Result;
    }

    // Also for PrefetchOptions, whose starting limits carry the same names.
    internal static void AddProblems(OptionProblems problems, PrefetchLimits limits, int fixedMaxConcurrency)
    {
        problems.Require(limits.BudgetBytes >= 1, $"{nameof(limits.BudgetBytes)} must be at least 1 byte (was {limits.BudgetBytes})");
        problems.Require(limits.MaxConcurrency is null || (limits.MaxConcurrency >= 1 && limits.MaxConcurrency <= fixedMaxConcurrency),
            $"{nameof(limits.MaxConcurrency)} must be in [1, {fixedMaxConcurrency}] (was {limits.MaxConcurrency}); " +
            $"the upper end is ControllerOptions.MaxConcurrency, fixed at start");
        problems.Require(limits.MaxBytesPerSecond is null or >= 1, $"{nameof(limits.MaxBytesPerSecond)} must be at least 1 when set (was {limits.MaxBytesPerSecond})");
    }
}
