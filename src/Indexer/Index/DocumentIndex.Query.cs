using Indexing.Storage;

namespace Indexing.Indexer;

// Queries: the request is checked here (paging and limits), then handed to the engine's searcher
// with a QueryBudget (time limit, caller's cancellation, pattern expansion). The engine parses the
// classic syntax typed by the definition, checks fields and sort keys against it (QueryFields), and
// searches its near-real-time view; past the budget it throws QueryTimeoutException,
// OperationCanceledException or QueryExpansionException from inside the search, leaving its view
// released like any other end (see IIndexSearcher for what it throws).
internal sealed partial class DocumentIndex
{
    /// <summary>Runs <paramref name="query"/> on what the index holds as of its last refresh.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Take, Skip, TimeLimit, MaxExpandedTerms or MaxSortKeys is out of range.</exception>
    /// <exception cref="QuerySyntaxException">The text is not valid classic syntax, or nests deeper than <see cref="IndexQuery.MaxNestingDepth"/>.</exception>
    /// <exception cref="InvalidQueryException">An unknown field, a value of the wrong type, a sort the index cannot do (more keys than MaxSortKeys, a field twice), a pattern it refuses.</exception>
    /// <exception cref="QueryExpansionException">A pattern term matches more terms than <see cref="IndexQuery.MaxExpandedTerms"/>.</exception>
    /// <exception cref="QueryTimeoutException">The query ran past <see cref="IndexQuery.TimeLimit"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled while it ran.</exception>
    /// <exception cref="IndexReadException">The engine failed while searching.</exception>
    public QueryResult Query(IndexQuery query, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(query);
        ArgumentNullException.ThrowIfNull(query.Text);
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
        if (query.Take is < 1 or > IndexQuery.MaxTake)
        {
            throw new ArgumentOutOfRangeException(nameof(query), query.Take, $"Take is {query.Take}; it must be from 1 to {IndexQuery.MaxTake}.");
        }

        if (query.Skip < 0 || (long)query.Skip + query.Take > IndexQuery.MaxWindow)
        {
            throw new ArgumentOutOfRangeException(
                nameof(query), query.Skip, $"Skip is {query.Skip} with Take {query.Take}; Skip must be at least 0 and Skip + Take at most {IndexQuery.MaxWindow}.");
        }

        if (query.TimeLimit is { } limit && limit <= TimeSpan.Zero)
        {
            throw new ArgumentOutOfRangeException(nameof(query), limit, $"TimeLimit is {limit}; it must be positive, or null for none.");
        }

        if (query.MaxExpandedTerms is < 1 or > IndexQuery.MaxExpandedTermsLimit)
        {
            throw new ArgumentOutOfRangeException(
                nameof(query), query.MaxExpandedTerms, $"MaxExpandedTerms is {query.MaxExpandedTerms}; it must be from 1 to {IndexQuery.MaxExpandedTermsLimit}.");
        }

        if (query.MaxSortKeys is < 1 or > IndexQuery.MaxSortKeysLimit)
        {
            throw new ArgumentOutOfRangeException(
                nameof(query), query.MaxSortKeys, $"MaxSortKeys is {query.MaxSortKeys}; it must be from 1 to {IndexQuery.MaxSortKeysLimit}.");
        }

        return _searcher.Search(query, new QueryBudget(Name, query, cancellationToken));
    }

    /// <summary>Runs <paramref name="query"/> as <see cref="Query(IndexQuery)"/> does, then loads the hits' documents from <paramref name="store"/> in one GetMany.</summary>
    /// <exception cref="IndexReadException">Reading the documents from the store failed.</exception>
    public QueryResult Query(IndexQuery query, DocumentStore store, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(store);
        var result = Query(query, cancellationToken);
        if (result.Hits.Count == 0)
        {
            return result;
        }

        var ids = new string[result.Hits.Count];
        for (var i = 0; i < ids.Length; i++)
        {
            ids[i] = result.Hits[i].Id;
        }

        try
        {
            return result with { Documents = store.GetMany(ids) };
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(Name, $"loading {ids.Length} hit documents from the store failed: {exception.Message}", exception);
        }
    }

    /// <summary>
    /// References held on the current query view besides the index's own: 0 when no query is running.
    /// Tests read it to prove that a query stopped part-way released its searcher.
    /// </summary>
    internal int SearcherReferencesHeld => _searcher.ViewsHeld;
}
