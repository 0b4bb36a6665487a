using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>A failure of an index, naming it; the base of the indexer's exceptions.</summary>
public abstract class IndexException : Exception
{
    private protected IndexException(string indexName, string message, Exception? inner)
        : base(message, inner)
    {
        IndexName = indexName;
    }

    /// <summary>The index that failed.</summary>
    public string IndexName { get; }
}

/// <summary>
/// Writing to an index failed: the engine (Lucene) or the document. Wraps the original exception once,
/// at the indexer's boundary.
/// </summary>
public sealed class IndexWriteException : IndexException
{
    internal IndexWriteException(string indexName, string? documentId, string problem, Exception? inner)
        : base(indexName, Describe(indexName, documentId, problem), inner)
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
        : base(indexName, $"query {MessageText.Quote(query)} on index {MessageText.Quote(indexName)} is not valid" +
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
public sealed class InvalidQueryException : IndexException
{
    internal InvalidQueryException(string indexName, string problem)
        : base(indexName, $"index {MessageText.Quote(indexName)}: {problem}", null)
    {
    }
}

/// <summary>Reading an index failed (the engine failed while searching). Wraps the original exception once.</summary>
public sealed class IndexReadException : IndexException
{
    internal IndexReadException(string indexName, string problem, Exception? inner)
        : base(indexName, $"index {MessageText.Quote(indexName)}: {problem}", inner)
    {
    }
}

/// <summary>
/// A query ran past its time limit (<see cref="IndexQuery.TimeLimit"/>) and was stopped. Nothing
/// changed: the searcher it used was released and the next query runs as usual.
/// </summary>
public sealed class QueryTimeoutException : IndexException
{
    internal QueryTimeoutException(string indexName, string query, TimeSpan limit)
        : base(indexName, $"query {MessageText.Quote(query)} on index {MessageText.Quote(indexName)} was stopped at its time limit of {Describe(limit)}; " +
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
public sealed class QueryExpansionException : IndexException
{
    internal QueryExpansionException(string indexName, string term, int limit)
        : base(indexName, $"index {MessageText.Quote(indexName)}: {term} matches more than {limit} distinct terms, the most one term of a query may expand to; " +
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
