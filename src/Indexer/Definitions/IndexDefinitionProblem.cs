namespace Indexing.Indexer;

/// <summary>One thing wrong with an index definition.</summary>
/// <param name="Location">
/// Where in the definition, as a JSON-pointer-like path: "name", "fields[2].path",
/// "fields[0].sortible" for an unknown property; empty for the definition as a whole.
/// </param>
/// <param name="Message">What was wrong, with the value, the rule and what to do.</param>
public sealed record IndexDefinitionProblem(string Location, string Message)
{
    /// <inheritdoc/>
    public override string ToString() => $"{(Location.Length == 0 ? "(definition)" : Location)}: {Message}";
}
