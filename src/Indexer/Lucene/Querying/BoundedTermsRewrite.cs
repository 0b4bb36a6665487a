using Lucene.Net.Index;
using Lucene.Net.Search;

namespace Indexing.Indexer;

// How prefix, wildcard and regular-expression terms become a query: every matching term as a
// constant-score clause (as Lucene's CONSTANT_SCORE_BOOLEAN_QUERY_REWRITE does), refusing, as soon
// as it collects one term too many, a term that matches more than the query's MaxExpandedTerms.
//
// Lucene's own choices do not bound the expansion: the classic parser's default
// (CONSTANT_SCORE_AUTO) switches to a filter over every matching term past 350 of them, and
// TopTermsRewrite silently keeps an arbitrary top N. Lucene's boolean rewrite does refuse past
// BooleanQuery.MaxClauseCount, but that is one process-wide static; this class carries the limit
// of its own query instead. One instance per parsed query (it holds the query's budget).
internal sealed class BoundedTermsRewrite : ScoringRewrite<BooleanQuery>
{
    private readonly QueryBudget _budget;
    private MultiTermQuery? _rewriting;

    public BoundedTermsRewrite(QueryBudget budget)
    {
        _budget = budget;
    }

    public override Query Rewrite(IndexReader reader, MultiTermQuery query)
    {
        _rewriting = query;
        var clauses = (BooleanQuery)base.Rewrite(reader, query);
        return new ConstantScoreQuery(clauses) { Boost = query.Boost };
    }

    protected override BooleanQuery GetTopLevelQuery() => new(disableCoord: true);

    protected override void AddClause(BooleanQuery topLevel, Term term, int docCount, float boost, TermContext states) =>
        topLevel.Add(new TermQuery(term, states) { Boost = boost }, Occur.SHOULD);

    // Called for each new distinct term, while the terms are still being enumerated.
    protected override void CheckMaxClauseCount(int count)
    {
        _budget.CheckSometimes();
        if (count > _budget.MaxExpandedTerms)
        {
            throw new QueryExpansionException(_budget.IndexName, Describe(_rewriting), _budget.MaxExpandedTerms);
        }
    }

    private static string Describe(MultiTermQuery? query) => query switch
    {
        PatternTermQuery pattern => pattern.Description,
        PrefixQuery prefix => $"prefix {MessageText.Quote(prefix.Field + ":" + prefix.Prefix.Text + "*")}",
        null => "a term",
        _ => MessageText.Quote(query.ToString()),
    };
}
