using System.Globalization;

using Microsoft.Extensions.Options;

namespace Indexing;

/// <summary>
/// The one way options are judged, in every layer: each options type has an
/// <see cref="IValidateOptions{TOptions}"/> validator in its own layer holding all its rules; the
/// layer's entry points run it through <see cref="ThrowIfInvalid"/>, and the server registers the
/// same validators with ValidateOnStart. A validator collects every problem here (what, its value,
/// the rule), so that one exception names them all instead of one restart per mistake.
/// Short-lived and confined to the validating thread.
/// </summary>
/// <param name="prefix">Put before each problem, e.g. "PrefetchOptions." before "TickInterval must be ...".</param>
internal sealed class OptionProblems(string prefix = "")
{
    private readonly List<string> _problems = [];

    /// <summary>Every problem so far: Success when none.</summary>
    public ValidateOptionsResult Result => _problems.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(_problems);

    /// <summary>
    /// Runs <paramref name="validator"/> and throws <see cref="OptionsValidationException"/> (its message
    /// is every problem, joined by "; ") if it failed; returns <paramref name="options"/> otherwise.
    /// </summary>
    public static TOptions ThrowIfInvalid<TOptions>(IValidateOptions<TOptions> validator, TOptions options)
        where TOptions : class
    {
        ArgumentNullException.ThrowIfNull(validator);
        ArgumentNullException.ThrowIfNull(options);
        var result = validator.Validate(Options.DefaultName, options);
        return result.Failed ? throw new OptionsValidationException(Options.DefaultName, typeof(TOptions), result.Failures) : options;
    }

    public void Require(bool condition, string problem)
    {
        if (!condition)
        {
            _problems.Add(prefix + problem);
        }
    }

    /// <summary>Adds the problems of a nested options object, as its own validator named them.</summary>
    public void Include(ValidateOptionsResult result)
    {
        if (result.Failed)
        {
            _problems.AddRange(result.Failures ?? [result.FailureMessage]);
        }
    }

    public void Positive(TimeSpan value, string name) =>
        Require(value > TimeSpan.Zero, Invariant($"{name} must be positive (was {value})"));

    public void InRange(double value, double min, double max, string name) =>
        Require(value >= min && value <= max, Invariant($"{name} must be in [{min}, {max}] (was {value})"));

    private static string Invariant(FormattableString text) => text.ToString(CultureInfo.InvariantCulture);
}
