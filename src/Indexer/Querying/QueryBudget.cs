using System.Diagnostics;

namespace Indexing.Indexer;

// What one query may spend: time (IndexQuery.TimeLimit, counted from the query's start), the
// caller's cancellation (an HTTP client that went away) and how far its pattern terms may expand
// (IndexQuery.MaxExpandedTerms). Engine-neutral: the engine checks it wherever it can stop a query.
// Lucene.Net 4.8 has no cancellation of its own, so the Lucene engine checks it wherever Lucene calls
// back into our code: per segment and every 256 documents while collecting (BudgetedCollector),
// every 256 terms a pattern enumerates (PatternTermQuery), per term an expansion keeps
// (BoundedTermsRewrite), and per hit loaded. Stopping throws from inside the search; the engine
// releases its searcher in a finally, so a stopped query leaves nothing held.
//
// One query, one thread: not thread-safe.
internal sealed class QueryBudget
{
    private const int CheckEvery = 256;

    private readonly string _indexName;
    private readonly IndexQuery _query;
    private readonly long _deadline;
    private readonly CancellationToken _cancellationToken;
    private int _calls;

    public QueryBudget(string indexName, IndexQuery query, CancellationToken cancellationToken)
    {
        _indexName = indexName;
        _query = query;
        _cancellationToken = cancellationToken;
        _deadline = query.TimeLimit is { } limit
            ? Stopwatch.GetTimestamp() + (long)Math.Min(limit.TotalSeconds * Stopwatch.Frequency, long.MaxValue / 4)
            : long.MaxValue;
    }

    public string IndexName => _indexName;

    public int MaxExpandedTerms => _query.MaxExpandedTerms;

    /// <summary>Throws <see cref="OperationCanceledException"/> or <see cref="QueryTimeoutException"/> when the query must stop.</summary>
    public void Check()
    {
        _cancellationToken.ThrowIfCancellationRequested();
        if (Stopwatch.GetTimestamp() > _deadline)
        {
            throw new QueryTimeoutException(_indexName, _query.Text, _query.TimeLimit!.Value);
        }
    }

    /// <summary><see cref="Check"/> on the first call and every 256th after it: for per-document and per-term paths.</summary>
    public void CheckSometimes()
    {
        if ((_calls++ & (CheckEvery - 1)) == 0)
        {
            Check();
        }
    }
}
