using System.Diagnostics;

using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Indexing.Indexer;

// What one query may spend: time (IndexQuery.TimeLimit, counted from the query's start), the
// caller's cancellation (an HTTP client that went away) and how far its pattern terms may expand
// (IndexQuery.MaxExpandedTerms). Lucene.Net 4.8 has no cancellation of its own, so the budget is
// checked wherever Lucene calls back into our code: per segment and every 256 documents while
// collecting (BudgetedCollector), every 256 terms a pattern enumerates (PatternTermQuery), per term
// an expansion keeps (BoundedTermsRewrite), and per hit loaded. Stopping throws from inside the
// search; the caller releases the searcher in its finally, so a stopped query leaves nothing held.
//
// One query, one thread (IndexSearcher runs without an executor here): not thread-safe.
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

// Wraps the collector that keeps the top hits, checking the query's budget as documents arrive.
internal sealed class BudgetedCollector : ICollector
{
    private readonly ICollector _inner;
    private readonly QueryBudget _budget;

    public BudgetedCollector(ICollector inner, QueryBudget budget)
    {
        _inner = inner;
        _budget = budget;
    }

    public bool AcceptsDocsOutOfOrder => _inner.AcceptsDocsOutOfOrder;

    public void SetScorer(Scorer scorer) => _inner.SetScorer(scorer);

    public void SetNextReader(AtomicReaderContext context)
    {
        _budget.Check();
        _inner.SetNextReader(context);
    }

    public void Collect(int doc)
    {
        _budget.CheckSometimes();
        _inner.Collect(doc);
    }
}
