using System.Collections.Immutable;
using System.Text;

using Indexing.Storage;

namespace Indexing.Indexer;

// The indexer's exceptions: one family under IndexException, each naming the index it is about.
//
// Three channels, as everywhere in this codebase. Expected outcomes are results, not exceptions
// (IndexPutResult, CatchUpResult, the verify reports; a document that cannot be indexed is counted
// in the status). Misuse by the calling code throws the BCL's ArgumentException family,
// InvalidOperationException ("index 'x' cannot build while it is Following") or
// ObjectDisposedException, naming the index. Everything else the indexer throws on purpose is an
// IndexException:
// - requests it refuses: IndexDefinitionException, QuerySyntaxException, InvalidQueryException,
//   QueryExpansionException, IndexNotFoundException, RebuildConflictException, VerifyConflictException;
// - failures: IndexWriteException and IndexReadException (the engine or the store failed; they wrap
//   the original exception once, where it crossed into the indexer), IndexUnavailableException (a
//   generation that could not be opened) and QueryTimeoutException (a query stopped at its limit).
// Each carries its IndexingErrorKind, and the server maps each kind to one HTTP status
// (src/Server/Http/IndexEndpoints.cs). Only IndexException, IndexDefinitionException (its problems)
// and QuerySyntaxException (the column) are public: a host switches on the kind, and the other types
// stay free to change.

/// <summary>The base of every exception the indexer throws on purpose: a request it refuses or a failure, naming the index.</summary>
public abstract class IndexException : IndexingException
{
    private protected IndexException(IndexingErrorKind kind, string? indexName, string message, Exception? inner)
        : base(kind, message, inner)
    {
        IndexName = indexName;
    }

    /// <summary>The index concerned; null only for a definition refused before its name could be read.</summary>
    public string? IndexName { get; }

    // An exception from the engine or the store that the indexer wraps once: everything but those
    // that must pass as they are (out of memory, cancellation) and its own, already wrapped ones.
    internal static bool IsFailureToWrap(Exception exception) =>
        exception is not (OutOfMemoryException or OperationCanceledException or IndexException);
}

/// <summary>
/// Writing to an index failed: the engine (Lucene) or the document. Wraps the original exception once,
/// at the indexer's boundary.
/// </summary>
internal sealed class IndexWriteException : IndexException
{
    internal IndexWriteException(string indexName, string? documentId, string problem, Exception? inner)
        : base(IndexingErrorKind.Failure, indexName, Describe(indexName, documentId, problem), inner)
    {
        DocumentId = documentId;
    }

    /// <summary>The document being written, when the failure concerns one.</summary>
    public string? DocumentId { get; }

    private static string Describe(string indexName, string? documentId, string problem) =>
        documentId is null
            ? $"index {MessageText.Quote(indexName)}: {problem}"
            : $"index {MessageText.Quote(indexName)}, document {MessageText.Quote(documentId)}: {problem}";
}

/// <summary>A query's text is not valid Lucene classic syntax.</summary>
public sealed class QuerySyntaxException : IndexException
{
    internal QuerySyntaxException(string indexName, string query, int column, string problem, Exception? inner)
        : base(IndexingErrorKind.InvalidQuery, indexName, $"query {MessageText.Quote(query)} on index {MessageText.Quote(indexName)} is not valid" +
            (column > 0 ? $" at character {column}: " : ": ") + problem, inner)
    {
        Query = query;
        Column = column;
        Problem = problem;
    }

    /// <summary>The query text as given.</summary>
    public string Query { get; }

    /// <summary>1-based character position where the problem was found (one past the end when the query ended too early); 0 when the parser did not say.</summary>
    public int Column { get; }

    /// <summary>What is wrong there.</summary>
    public string Problem { get; }
}

/// <summary>A query is well-formed but asks for something the index cannot do: an unknown field, a value of the wrong type, a sort on a field that is not sortable.</summary>
internal sealed class InvalidQueryException : IndexException
{
    internal InvalidQueryException(string indexName, string problem)
        : base(IndexingErrorKind.InvalidQuery, indexName, $"index {MessageText.Quote(indexName)}: {problem}", null)
    {
    }
}

/// <summary>Reading an index failed (the engine failed while searching). Wraps the original exception once.</summary>
internal sealed class IndexReadException : IndexException
{
    internal IndexReadException(string indexName, string problem, Exception? inner)
        : base(IndexingErrorKind.Failure, indexName, $"index {MessageText.Quote(indexName)}: {problem}", inner)
    {
    }
}

/// <summary>
/// A query ran past its time limit (<see cref="IndexQuery.TimeLimit"/>) and was stopped. Nothing
/// changed: the searcher it used was released and the next query runs as usual.
/// </summary>
internal sealed class QueryTimeoutException : IndexException
{
    internal QueryTimeoutException(string indexName, string query, TimeSpan limit)
        : base(IndexingErrorKind.QueryTimeout, indexName, $"query {MessageText.Quote(query)} on index {MessageText.Quote(indexName)} was stopped at its time limit of {Describe(limit)}; " +
            "narrow it (more selective terms, patterns with longer literal beginnings, a smaller take) or allow it more time.", null)
    {
        Query = query;
        Limit = limit;
    }

    /// <summary>The query text as given.</summary>
    public string Query { get; }

    /// <summary>The time limit it ran past.</summary>
    public TimeSpan Limit { get; }

    private static string Describe(TimeSpan limit) =>
        limit < TimeSpan.FromSeconds(1)
            ? string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{limit.TotalMilliseconds:0.####} ms")
            : string.Create(System.Globalization.CultureInfo.InvariantCulture, $"{limit.TotalSeconds:0.###} s");
}

/// <summary>
/// A prefix, wildcard or regular-expression term matches more index terms than a query may expand
/// to (<see cref="IndexQuery.MaxExpandedTerms"/>); the query was not run.
/// </summary>
internal sealed class QueryExpansionException : IndexException
{
    internal QueryExpansionException(string indexName, string term, int limit)
        : base(IndexingErrorKind.QueryTooBroad, indexName, $"index {MessageText.Quote(indexName)}: {term} matches more than {limit} distinct terms, the most one term of a query may expand to; " +
            "make it narrower (a longer literal beginning, a more selective pattern) or use a range or exact terms.", null)
    {
        Term = term;
        Limit = limit;
    }

    /// <summary>The expanding term, described with its field (e.g. <c>wildcard 'customer:a*'</c>).</summary>
    public string Term { get; }

    /// <summary>The limit it went past.</summary>
    public int Limit { get; }
}

/// <summary>An index definition breaks a rule; carries every problem found, not just the first.</summary>
public sealed class IndexDefinitionException : IndexException
{
    /// <summary>Wraps the problems; the message lists them all, one a line.</summary>
    internal IndexDefinitionException(string? indexName, IReadOnlyList<IndexDefinitionProblem> problems)
        : base(IndexingErrorKind.InvalidDefinition, indexName, Describe(indexName, problems), null)
    {
        Problems = [.. problems];
    }

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

/// <summary>No index has the given name.</summary>
internal sealed class IndexNotFoundException : IndexException
{
    internal IndexNotFoundException(string name)
        : base(IndexingErrorKind.IndexNotFound, name, $"there is no index named {MessageText.Quote(name)}; define it first (PUT /indexes/{{name}}), or list the indexes to see their names.", null)
    {
    }
}

/// <summary>
/// A rebuild cannot start now: one of the index is already running (only one replacement per index
/// at a time), the index has no readable definition to rebuild with, or it is being deleted.
/// </summary>
internal sealed class RebuildConflictException : IndexException
{
    private RebuildConflictException(string name, string message)
        : base(IndexingErrorKind.RebuildConflict, name, message, null)
    {
    }

    internal static RebuildConflictException AlreadyRunning(string name, RebuildProgress running) =>
        new(name, new StringBuilder()
            .Append(running.Phase == RebuildPhase.Queued
                ? $"a rebuild of index {MessageText.Quote(name)} is already queued (generation {running.Generation}, place {running.QueuePosition} in the queue for {IndexOptions.SettingsPrefix}{nameof(IndexOptions.MaxConcurrentRebuilds)}, "
                : $"a rebuild of index {MessageText.Quote(name)} is already running (generation {running.Generation}, phase {running.Phase}, ")
            .Append($"started {running.StartedAt:u}); only one replacement per index runs at a time. Wait for it, or cancel it first.")
            .ToString());

    internal static RebuildConflictException BeingDeleted(string name) =>
        new(name, $"index {MessageText.Quote(name)} is being deleted; nothing can be defined, rebuilt or deleted under that name until the delete ended. " +
            $"Wait for it (GET /indexes answers without it once it is gone), then define it again.");

    // The reason (it names the catalog's path) stays in the index's status, where the server shows it to operators only.
    internal static RebuildConflictException NoDefinition(string name) =>
        new(name, $"index {MessageText.Quote(name)} has no readable definition to rebuild with (its status says why); " +
            $"PUT its definition to /indexes/{name}, which rebuilds it with that.");
}

/// <summary>
/// The index cannot answer: its serving generation could not be opened when the manager opened (a
/// damaged or locked directory, an unreadable definition). A rebuild builds a new generation from
/// the store and replaces it.
/// </summary>
internal sealed class IndexUnavailableException : IndexException
{
    internal IndexUnavailableException(string name, int generation, string reason)
        : base(IndexingErrorKind.IndexUnavailable, name, $"index {MessageText.Quote(name)} cannot answer: its generation {generation} could not be opened ({reason}). " +
            $"Rebuild it from the store (POST /indexes/{name}/rebuild), or fix the cause and restart.", null)
    {
        Reason = reason;
    }

    /// <summary>Why its generation could not be opened.</summary>
    public string Reason { get; }
}

/// <summary>A verify of the index is already running: one runs at a time per index.</summary>
internal sealed class VerifyConflictException : IndexException
{
    internal VerifyConflictException(string name, DateTimeOffset runningSince)
        : base(IndexingErrorKind.VerifyConflict, name, $"a verify of index {MessageText.Quote(name)} is already running (since {runningSince:u}); one runs at a time per index, " +
            "as each reads every entry and every document of the collection. Wait for its report, then ask again.", null)
    {
    }
}
