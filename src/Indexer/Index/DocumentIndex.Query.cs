using System.Collections.Frozen;
using System.Text.RegularExpressions;

using Indexing.Storage;

using Lucene.Net.QueryParsers.Classic;
using Lucene.Net.Search;

namespace Indexing.Indexer;

// Queries: classic syntax typed by the definition (DefinitionQueryParser), paging, sort on
// sortable fields, on the near-real-time searcher (acquired per query, released in finally).
// Parse errors become QuerySyntaxException with the position; requests the definition cannot
// answer, InvalidQueryException; engine failures, IndexReadException. Each query runs under a
// QueryBudget (time limit, caller's cancellation, pattern expansion): past it,
// QueryTimeoutException, OperationCanceledException or QueryExpansionException, thrown from inside
// the search and leaving the searcher released like any other end.
public sealed partial class DocumentIndex
{
    private static readonly HashSet<string> _hitFields = [LuceneFieldNames.Id, LuceneFieldNames.Etag];

    private FrozenDictionary<string, IndexFieldType>? _queryTypes;

    /// <summary>Runs <paramref name="query"/> on what the index holds as of its last refresh.</summary>
    /// <exception cref="ArgumentOutOfRangeException">Take, Skip, TimeLimit or MaxExpandedTerms is out of range.</exception>
    /// <exception cref="QuerySyntaxException">The text is not valid classic syntax.</exception>
    /// <exception cref="InvalidQueryException">An unknown field, a value of the wrong type, a sort the index cannot do, a pattern it refuses.</exception>
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

        var budget = new QueryBudget(Name, query, cancellationToken);
        var parsed = Parse(query, budget);
        var sort = BuildSort(query.Sort);
        var window = query.Skip + query.Take;
        SearcherLease lease;
        try
        {
            lease = _sink.AcquireSearcher();
        }
        catch (Exception exception) when (IsEngineFailure(exception))
        {
            throw new IndexReadException(Name, $"opening a searcher failed: {exception.Message}", exception);
        }

        try
        {
            var searcher = lease.Searcher;
            // The collectors IndexSearcher.Search(query, n[, sort]) would make, told that documents may
            // arrive out of order (always correct, as the tie-break on doc id holds either way), and
            // wrapped to check the budget as documents arrive.
            ITopDocsCollector topCollector = sort is null
                ? TopScoreDocCollector.Create(window, docsScoredInOrder: false)
                : TopFieldCollector.Create(sort, window, fillFields: true, trackDocScores: true, trackMaxScore: false, docsScoredInOrder: false);
            searcher.Search(parsed, new BudgetedCollector((ICollector)topCollector, budget));
            var top = topCollector.GetTopDocs();
            var hits = new List<QueryHit>(Math.Max(0, Math.Min(query.Take, top.ScoreDocs.Length - query.Skip)));
            for (var i = query.Skip; i < top.ScoreDocs.Length; i++)
            {
                budget.CheckSometimes();
                var scoreDoc = top.ScoreDocs[i];
                var stored = searcher.Doc(scoreDoc.Doc, _hitFields);
                hits.Add(new QueryHit(stored.Get(LuceneFieldNames.Id), scoreDoc.Score, stored.GetField(LuceneFieldNames.Etag)?.GetInt64Value() ?? 0));
            }

            return new QueryResult(top.TotalHits, hits);
        }
        catch (BooleanQuery.TooManyClausesException)
        {
            throw new InvalidQueryException(
                Name, $"query {MessageText.Quote(query.Text)} expands to more than {BooleanQuery.MaxClauseCount} terms; make its wildcards or ranges narrower.");
        }
        catch (Exception exception) when (IsEngineFailure(exception))
        {
            throw new IndexReadException(Name, $"searching failed: {exception.Message}", exception);
        }
        finally
        {
            lease.Dispose();
        }
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
        catch (Exception exception) when (IsEngineFailure(exception))
        {
            throw new IndexReadException(Name, $"loading {ids.Length} hit documents from the store failed: {exception.Message}", exception);
        }
    }

    /// <summary>
    /// References held on the current query view besides the index's own: 0 when no query is running.
    /// Tests read it to prove that a query stopped part-way released its searcher.
    /// </summary>
    internal int SearcherReferencesHeld
    {
        get
        {
            using var lease = _sink.AcquireSearcher();
            return lease.Searcher.IndexReader.RefCount - 2; // the manager's and this getter's own
        }
    }

    private Query Parse(IndexQuery query, QueryBudget budget)
    {
        var types = _queryTypes ??= QueryTypes(Definition);
        var defaultField = query.DefaultField ?? DefaultField(Definition);
        if (!types.ContainsKey(defaultField))
        {
            throw new InvalidQueryException(Name, $"default field {MessageText.Quote(defaultField)} is not in the index; its fields are {string.Join(", ", types.Keys.Order(StringComparer.Ordinal))}.");
        }

        var parser = new DefinitionQueryParser(Definition, types, defaultField, _sink.Analyzer, budget);
        try
        {
            return parser.Parse(query.Text);
        }
        catch (ParseException exception)
        {
            var (column, problem) = Describe(query.Text, exception);
            throw new QuerySyntaxException(Name, query.Text, column, problem, exception);
        }
    }

    private Sort? BuildSort(IReadOnlyList<QuerySort>? keys)
    {
        if (keys is null || keys.Count == 0)
        {
            return null;
        }

        var fields = new SortField[keys.Count];
        for (var i = 0; i < keys.Count; i++)
        {
            var key = keys[i] ?? throw new ArgumentException($"sort key {i} is null.", nameof(keys));
            var definition = Definition.Fields.FirstOrDefault(f => f.Name == key.Field);
            if (definition is null || !definition.Sortable)
            {
                var sortable = Definition.Fields.Where(f => f.Sortable).Select(f => f.Name).ToList();
                throw new InvalidQueryException(
                    Name,
                    (definition is null ? $"sort field {MessageText.Quote(key.Field)} is not in the index" : $"field {MessageText.Quote(key.Field)} is not sortable") +
                    (sortable.Count == 0 ? "; no field of this index is sortable (set \"sortable\": true in the definition and rebuild)." : $"; sortable fields: {string.Join(", ", sortable)}."));
            }

            var type = definition.Type switch
            {
                IndexFieldType.Keyword => SortFieldType.STRING,
                IndexFieldType.Double => SortFieldType.DOUBLE,
                _ => SortFieldType.INT64,
            };
            fields[i] = new SortField(key.Field, type, key.Descending);
        }

        return new Sort(fields);
    }

    private static FrozenDictionary<string, IndexFieldType> QueryTypes(IndexDefinition definition)
    {
        var types = definition.Fields.ToDictionary(f => f.Name, f => f.Type, StringComparer.Ordinal);
        types[LuceneFieldNames.Id] = IndexFieldType.Keyword;
        types[LuceneFieldNames.Etag] = IndexFieldType.Long;
        return types.ToFrozenDictionary(StringComparer.Ordinal);
    }

    private static string DefaultField(IndexDefinition definition) =>
        (definition.Fields.FirstOrDefault(f => f.Type == IndexFieldType.Text) ?? definition.Fields[0]).Name;

    // The parser's position (1-based) and a short problem; Lucene's own message lists every token
    // it could have expected, which says little to a person typing a query. The parser's token
    // columns are 0-based; the lexer's error columns are 1-based.
    private static (int Column, string Problem) Describe(string text, ParseException exception)
    {
        if (exception.InnerException is ParseException { CurrentToken.Next: { } next })
        {
            return next.Kind == 0
                ? (text.Length + 1, "the query ends where a term, a phrase or a closing bracket was expected")
                : (next.BeginColumn + 1, $"{MessageText.Quote(next.Image)} is not expected there");
        }

        var message = exception.InnerException?.Message ?? exception.Message;
        if (exception.InnerException is TokenMgrError && message.Contains("Encountered: <EOF>", StringComparison.Ordinal))
        {
            var quote = UnclosedQuote(text);
            return quote >= 0
                ? (quote + 1, "the phrase opened by this '\"' is never closed")
                : (text.Length + 1, "the query ends inside an unfinished term (a trailing '\\'?)");
        }

        var match = Regex.Match(message, @"column (\d+)", RegexOptions.CultureInvariant);
        var column = match.Success ? int.Parse(match.Groups[1].Value, System.Globalization.CultureInfo.InvariantCulture) : 0;
        var colon = message.IndexOf("': ", StringComparison.Ordinal);
        return (column, colon >= 0 ? message[(colon + 3)..] : message);
    }

    // Index of the '"' that opens a phrase never closed, or -1.
    private static int UnclosedQuote(string text)
    {
        var open = -1;
        for (var i = 0; i < text.Length; i++)
        {
            if (text[i] == '\\')
            {
                i++;
            }
            else if (text[i] == '"')
            {
                open = open < 0 ? i : -1;
            }
        }

        return open;
    }
}
