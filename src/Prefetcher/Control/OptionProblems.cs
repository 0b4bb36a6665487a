namespace Indexing.Prefetcher;

/// <summary>
/// Collects every invalid setting of an options object so that one exception names them all,
/// instead of making the operator fix them one restart at a time. Used by the options types'
/// <c>Validate()</c>; short-lived and confined to the validating thread.
/// </summary>
internal sealed class OptionProblems(string optionsName)
{
    private readonly List<string> _problems = [];

    public void Require(bool condition, string problem)
    {
        if (!condition)
        {
            _problems.Add(problem);
        }
    }

    public void Positive(TimeSpan value, string name) =>
        Require(value > TimeSpan.Zero, ControlText.Invariant($"{name} must be positive (was {value})"));

    public void InRange(double value, double min, double max, string name) =>
        Require(value >= min && value <= max, ControlText.Invariant($"{name} must be in [{min}, {max}] (was {value})"));

    public void ThrowIfAny()
    {
        if (_problems.Count > 0)
        {
            throw new ArgumentException($"Invalid {optionsName}: {string.Join("; ", _problems)}.");
        }
    }
}
