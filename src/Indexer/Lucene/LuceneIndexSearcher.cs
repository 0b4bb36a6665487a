using Indexing.Storage;

using Lucene.Net.Search;

namespace Indexing.Indexer;

// The Lucene engine's reading side (IIndexSearcher), over the near-real-time searchers of its sink's
// SearcherManager: queries (DefinitionQueryParser, sort on doc values, top-N collection under the
// query's budget, hits' id and etag from stored fields) and the verify cursor (every live id once from
// the terms of __id, in key order, its etag from doc values).
//
// Each call acquires a searcher and releases it in finally (a rollback may replace the manager
// meanwhile: the lease releases to the one it came from), so a query stopped part-way by its budget
// holds nothing. Thread-safe: the analyser and QueryFields are shared, parsers are per query.
internal sealed class LuceneIndexSearcher : IIndexSearcher
{
    private static readonly HashSet<string> _hitFields = [IndexFieldNames.Id, IndexFieldNames.Etag];

    private readonly LuceneIndexSink _sink;
    private readonly IndexDefinition _definition;
    private readonly QueryFields _fields;

    public LuceneIndexSearcher(LuceneIndexSink sink, IndexDefinition definition)
    {
        _sink = sink;
        _definition = definition;
        _fields = new QueryFields(definition);
    }

    public long DocumentCount
    {
        get
        {
            using var lease = _sink.AcquireSearcher();
            return lease.Searcher.IndexReader.NumDocs;
        }
    }

    public int ViewsHeld
    {
        get
        {
            using var lease = _sink.AcquireSearcher();
            return lease.Searcher.IndexReader.RefCount - 2; // the manager's and this getter's own
        }
    }

    public QueryResult Search(IndexQuery query, QueryBudget budget)
    {
        var parsed = DefinitionQueryParser.Parse(_definition, _fields, query, _sink.Analyzer, budget);
        var keys = query.SortKeys;
        var sort = Sort(_fields.SortFields(keys, query.MaxSortKeys), keys);
        SearcherLease lease;
        try
        {
            lease = _sink.AcquireSearcher();
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(_definition.Name, $"opening a searcher failed: {exception.Message}", exception);
        }

        try
        {
            var searcher = lease.Searcher;
            // The collectors allocate every slot of the window (each sort key one more array) before
            // the first hit: no query can have more hits than the view has documents, so a deep page
            // of a small index costs what the index holds, not what the page asks for.
            var window = (int)Math.Min((long)query.Skip + query.Take, Math.Max(1, searcher.IndexReader.NumDocs));
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
                hits.Add(new QueryHit(stored.Get(IndexFieldNames.Id), scoreDoc.Score, stored.GetField(IndexFieldNames.Etag)?.GetInt64Value() ?? 0)
                {
                    SortValues = scoreDoc is FieldDoc fieldDoc ? SortValues(fieldDoc.Fields) : [],
                });
            }

            return new QueryResult(top.TotalHits, hits);
        }
        catch (BooleanQuery.TooManyClausesException)
        {
            throw new InvalidQueryException(
                _definition.Name, $"query {MessageText.Quote(query.Text)} expands to more than {BooleanQuery.MaxClauseCount} terms; make its wildcards or ranges narrower.");
        }
        catch (Exception exception) when (IndexException.IsFailureToWrap(exception))
        {
            throw new IndexReadException(_definition.Name, $"searching failed: {exception.Message}", exception);
        }
        finally
        {
            lease.Dispose();
        }
    }

    // Terms compare as UTF-8 bytes, the store's key order. Linear in the ids counted (a term range
    // over __id), once per resumed build.
    public long CountIdsThrough(string id)
    {
        using var lease = _sink.AcquireSearcher();
        var count = new TotalHitCountCollector();
        lease.Searcher.Search(TermRangeQuery.NewStringRange(IndexFieldNames.Id, null, id, includeLower: true, includeUpper: true), count);
        return count.TotalHits;
    }

    public IEnumerator<IndexIdEntry> OpenIdCursor()
    {
        var lease = _sink.AcquireSearcher();
        try
        {
            return new IdCursor(lease);
        }
        catch
        {
            lease.Dispose();
            throw;
        }
    }

    // What TopFieldCollector filled in (fillFields) for one hit, as QueryHit.SortValues holds it: the
    // STRING comparator's BytesRef (null for a document without a value) decoded from UTF-8, the
    // numeric comparators' values, which Lucene.Net boxes as J2N.Numerics.Int64 and Double, unboxed to
    // long and double (0 for a document without a value: no SortField.MissingValue is set, so the doc
    // values' 0 is what was compared).
    private static object?[] SortValues(object[] fields)
    {
        var values = new object?[fields.Length];
        for (var i = 0; i < fields.Length; i++)
        {
            values[i] = fields[i] switch
            {
                null => null,
                Lucene.Net.Util.BytesRef bytes => bytes.Utf8ToString(),
                J2N.Numerics.Int64 number => number.ToInt64(),
                J2N.Numerics.Double number => number.ToDouble(),
                var other => throw new InvalidOperationException($"sort key {i + 1} holds a {other.GetType().FullName}; expected a BytesRef, long or double."),
            };
        }

        return values;
    }

    // Keyword fields sort by their sorted doc values, doubles and longs (bool as 0/1) by numeric ones.
    private static Sort? Sort(IndexFieldDefinition[] fields, IReadOnlyList<QuerySort> keys)
    {
        if (fields.Length == 0)
        {
            return null;
        }

        var sortFields = new SortField[fields.Length];
        for (var i = 0; i < fields.Length; i++)
        {
            var type = fields[i].Type switch
            {
                IndexFieldType.Keyword => SortFieldType.STRING,
                IndexFieldType.Double => SortFieldType.DOUBLE,
                _ => SortFieldType.INT64,
            };
            sortFields[i] = new SortField(fields[i].Name, type, keys[i].Descending);
        }

        return new Sort(sortFields);
    }

    /// <summary>
    /// The ids of one held view in term order (BytesRef compares unsigned bytes: the store's key order),
    /// from the merged terms of <c>__id</c>; an id's entries are its term's live postings, the etag the
    /// first one's doc value. Holds one term and one postings enum, whatever the index's size.
    /// </summary>
    private sealed class IdCursor : IEnumerator<IndexIdEntry>
    {
        private readonly SearcherLease _lease;
        private readonly Lucene.Net.Index.TermsEnum? _terms;
        private readonly Lucene.Net.Util.IBits? _live;
        private readonly Lucene.Net.Index.NumericDocValues? _etags;
        private Lucene.Net.Index.DocsEnum? _docs;
        private int _disposed;

        public IdCursor(SearcherLease lease)
        {
            _lease = lease;
            var reader = lease.Searcher.IndexReader;
            _terms = Lucene.Net.Index.MultiFields.GetTerms(reader, IndexFieldNames.Id)?.GetEnumerator();
            _live = Lucene.Net.Index.MultiFields.GetLiveDocs(reader);
            _etags = Lucene.Net.Index.MultiDocValues.GetNumericValues(reader, IndexFieldNames.Etag);
        }

        public IndexIdEntry Current { get; private set; }

        object System.Collections.IEnumerator.Current => Current;

        public bool MoveNext()
        {
            ObjectDisposedException.ThrowIf(Volatile.Read(ref _disposed) != 0, this);
            while (_terms is not null && _terms.MoveNext())
            {
                _docs = _terms.Docs(_live, _docs, Lucene.Net.Index.DocsFlags.NONE);
                var copies = 0;
                long etag = 0;
                int doc;
                while ((doc = _docs.NextDoc()) != DocIdSetIterator.NO_MORE_DOCS)
                {
                    if (copies == 0)
                    {
                        etag = _etags?.Get(doc) ?? 0;
                    }

                    copies++;
                }

                if (copies > 0)
                {
                    Current = new IndexIdEntry(_terms.Term.Utf8ToString(), etag, copies);
                    return true;
                }
            }

            return false;
        }

        public void Reset() => throw new NotSupportedException("an id cursor reads forward once; open another.");

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) == 0)
            {
                _lease.Dispose();
            }
        }
    }
}

/// <summary>A searcher acquired from one SearcherManager; disposing releases it there.</summary>
internal readonly struct SearcherLease(SearcherManager manager, IndexSearcher searcher) : IDisposable
{
    public IndexSearcher Searcher { get; } = searcher;

    public void Dispose() => manager.Release(Searcher);
}
