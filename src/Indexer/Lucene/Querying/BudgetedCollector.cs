using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Indexing.Indexer;

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
