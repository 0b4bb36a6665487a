namespace Indexing.Indexer;

/// <summary>A query on one index: Lucene classic syntax, paging and sort.</summary>
/// <param name="Text">
/// Lucene classic syntax, e.g. <c>status:shipped AND total:[100 TO *] -customer.tier:gold</c>.
/// Text fields are analysed like the documents; keyword and bool fields match exactly; long and
/// double fields take numbers and numeric ranges (<c>[a TO b]</c>, <c>{a TO b}</c>, <c>*</c> for open).
/// <c>*:*</c> matches every document.
/// </param>
public sealed record IndexQuery(string Text)
{
    /// <summary>Most hits one query may return.</summary>
    public const int MaxTake = 10_000;

    /// <summary>Deepest page: skip + take may not exceed this.</summary>
    public const int MaxWindow = 100_000;

    /// <summary>Hits to return (1..<see cref="MaxTake"/>).</summary>
    public int Take { get; init; } = 20;

    /// <summary>Hits to skip first (0..; skip + take at most <see cref="MaxWindow"/>).</summary>
    public int Skip { get; init; }

    /// <summary>
    /// Sort keys in order: field names declared sortable, <c>-</c> before one for descending (e.g.
    /// <c>["-total", "id"]</c>, as the HTTP API's <c>sort=-total,id</c>); each field at most once and at
    /// most <see cref="MaxSortKeys"/> of them; empty for relevance (score) order.
    /// </summary>
    public IReadOnlyList<string> Sort { get; init; } = [];

    /// <summary><see cref="Sort"/>, parsed.</summary>
    internal IReadOnlyList<QuerySort> SortKeys => [.. Sort.Select(QuerySort.Parse)];

    /// <summary>
    /// How many sort keys the query may have (1..<see cref="MaxSortKeysLimit"/>); more is an
    /// <see cref="IndexException"/> of kind <see cref="IndexingErrorKind.InvalidQuery"/>. Every key holds a slot per hit of the page window, so the
    /// keys multiply what a query allocates before it finds anything.
    /// </summary>
    public int MaxSortKeys { get; init; } = DefaultMaxSortKeys;

    /// <summary>The default of <see cref="MaxSortKeys"/>.</summary>
    public const int DefaultMaxSortKeys = 8;

    /// <summary>The largest <see cref="MaxSortKeys"/>.</summary>
    public const int MaxSortKeysLimit = 64;

    /// <summary>
    /// Deepest nesting of parentheses and range brackets the text may have; deeper is a
    /// <see cref="QuerySyntaxException"/> found before parsing (the classic parser recurses once per
    /// level, so depth costs stack, not just time).
    /// </summary>
    public const int MaxNestingDepth = 100;

    /// <summary>The field searched by terms without a field name; null for the definition's first text field (else its first field).</summary>
    public string? DefaultField { get; init; }

    /// <summary>
    /// How long the query may run (parsing, expanding patterns, collecting and loading hits); past it
    /// the query stops with an <see cref="IndexException"/> of kind <see cref="IndexingErrorKind.QueryTimeout"/>. Null: no limit.
    /// </summary>
    public TimeSpan? TimeLimit { get; init; }

    /// <summary>
    /// How many distinct index terms one prefix, wildcard or regular-expression term may expand to
    /// (1..<see cref="MaxExpandedTermsLimit"/>); more is an <see cref="IndexException"/> of kind <see cref="IndexingErrorKind.QueryTooBroad"/>.
    /// Fuzzy terms keep the closest <c>min(50, this)</c> terms.
    /// </summary>
    public int MaxExpandedTerms { get; init; } = DefaultMaxExpandedTerms;

    /// <summary>The default of <see cref="MaxExpandedTerms"/>.</summary>
    public const int DefaultMaxExpandedTerms = 1024;

    /// <summary>
    /// The largest <see cref="MaxExpandedTerms"/>: an expansion becomes one Lucene BooleanQuery, whose
    /// clauses are capped process-wide at 1024 (BooleanQuery.MaxClauseCount).
    /// </summary>
    public const int MaxExpandedTermsLimit = 1024;

    /// <summary>Fuzzy terms keep at most this many of their closest terms (Lucene's own default).</summary>
    public const int MaxFuzzyExpansions = 50;
}

/// <summary>One sort key: a field declared sortable in the definition (anything else is an <see cref="InvalidQueryException"/> naming the sortable fields).</summary>
internal sealed record QuerySort(string Field, bool Descending = false)
{
    /// <summary>A key as <see cref="IndexQuery.Sort"/> spells it: the field, <c>-</c> first for descending (field names never start with one).</summary>
    public static QuerySort Parse(string key)
    {
        ArgumentNullException.ThrowIfNull(key);
        return key.StartsWith('-') ? new QuerySort(key[1..], Descending: true) : new QuerySort(key);
    }
}

/// <summary>A page of hits.</summary>
/// <param name="TotalHits">Documents matching the query, all pages.</param>
/// <param name="Hits">The requested page, in order.</param>
public sealed record QueryResult(long TotalHits, IReadOnlyList<QueryHit> Hits)
{
    /// <summary>
    /// When the query was run with a store: each hit's current document, parallel to <see cref="Hits"/>
    /// (null where the document was deleted after the index last saw it), read with one sorted GetMany.
    /// Empty otherwise.
    /// </summary>
    public IReadOnlyList<Storage.StoredDocument?> Documents { get; init; } = [];
}

/// <summary>One hit.</summary>
/// <param name="Id">The document's id.</param>
/// <param name="Score">Relevance, higher is better (computed also when sorting by fields).</param>
/// <param name="Etag">The etag of the body the index holds for it.</param>
public sealed record QueryHit(string Id, float Score, long Etag)
{
    /// <summary>
    /// The hit's value of each sort key, parallel to <see cref="IndexQuery.Sort"/>, as the index
    /// compared it; empty when the query sorts by relevance. A keyword field's value is a
    /// <see cref="string"/> (its UTF-8 bytes decoded; the index compares the bytes, unsigned), or null
    /// when the document has no value (null sorts before every string ascending, after every one
    /// descending). A long or bool field's value is a <see cref="long"/> (bool as 0 or 1), a double
    /// field's a <see cref="double"/> (compared as Java's Double.compare does: -0.0 before 0.0); a
    /// document without a value holds 0 there (0L, or 0.0 for a double), the value the index sorted it
    /// by: Lucene.Net 4.8's numeric sorts, with no missing value set, read the doc values' 0, so such a
    /// document is not told apart from one whose value is 0. A multi-valued field's value is its first.
    /// Hits' equality compares this list by reference, as <see cref="QueryResult.Hits"/> is compared.
    /// </summary>
    public IReadOnlyList<object?> SortValues { get; init; } = [];
}
