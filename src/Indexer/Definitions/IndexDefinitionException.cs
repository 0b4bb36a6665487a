using System.Collections.Immutable;
using System.Text;

using Indexing.Storage;

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

/// <summary>Thrown when an index definition breaks a rule; carries every problem found, not just the first.</summary>
public sealed class IndexDefinitionException : Exception
{
    /// <summary>Wraps the problems; the message lists them all, one a line.</summary>
    public IndexDefinitionException(string? indexName, IReadOnlyList<IndexDefinitionProblem> problems)
        : base(Describe(indexName, problems))
    {
        IndexName = indexName;
        Problems = [.. problems];
    }

    /// <summary>The definition's name when it could be read, else null.</summary>
    public string? IndexName { get; }

    /// <summary>Every problem found, in the order of the definition.</summary>
    public ImmutableArray<IndexDefinitionProblem> Problems { get; }

    private static string Describe(string? indexName, IReadOnlyList<IndexDefinitionProblem> problems)
    {
        ArgumentNullException.ThrowIfNull(problems);
        if (problems.Count == 0)
        {
            throw new ArgumentException("an index definition exception needs at least one problem.", nameof(problems));
        }

        var what = indexName is null ? "index definition" : $"index definition {MessageText.Quote(indexName)}";
        var text = new StringBuilder()
            .Append(what)
            .Append(problems.Count == 1 ? " has 1 problem:" : $" has {problems.Count} problems:");
        foreach (var problem in problems)
        {
            text.Append("\n  ").Append(problem);
        }

        return text.ToString();
    }
}
