namespace Indexing.Indexer;

// The boundary to the engine, reading side (see IIndexSink): queries and the entries a verify
// compares with the store, on the view as of the sink's last refresh. The loop checks paging and
// limits and hands over a QueryBudget the engine must check wherever it can stop; the engine checks
// the fields and sort keys a query names with the engine-neutral QueryFields as it parses.
//
// Failures: Search throws the indexer's query exceptions for a request it refuses (QuerySyntax,
// InvalidQuery, QueryExpansion), QueryTimeoutException or OperationCanceledException from the
// budget, and IndexReadException for its own failures, wrapped once (the engine alone knows whether
// opening its view or searching failed). OpenIdCursor and its MoveNext throw what the engine throws; the loop wraps it.
//
// Threading: any thread, any number of queries at once.
internal interface IIndexSearcher
{
    /// <summary>Live documents as of the last refresh.</summary>
    long DocumentCount { get; }

    /// <summary>Views held by running queries (0 when none runs); tests read it to prove that a stopped query released its view.</summary>
    int ViewsHeld { get; }

    /// <summary>One page of hits for <paramref name="query"/> (already checked for Take, Skip and limits), within <paramref name="budget"/>.</summary>
    QueryResult Search(IndexQuery query, QueryBudget budget);

    /// <summary>Live documents whose id is at or below <paramref name="id"/> (UTF-8 key order), as of the last refresh: what a resumed build skips.</summary>
    long CountIdsThrough(string id);

    /// <summary>
    /// Every live id once, in UTF-8 key order (the store's), with its etag and how many entries hold
    /// it, on the view as of the last refresh: the view is taken now and held until the cursor is disposed.
    /// </summary>
    IEnumerator<IndexIdEntry> OpenIdCursor();
}

/// <summary>One id of an index in key order: the etag of its first live entry, and how many live entries hold it (more than one is a duplicate).</summary>
internal readonly record struct IndexIdEntry(string Id, long Etag, int Copies);
