namespace Indexing.Indexer;

// The fields the indexer adds to every document, whatever the engine. Definition field names cannot
// start with "__" (IndexDefinition.ReservedFieldPrefix), so these never collide with them; queries
// may name them (__id as a keyword field, __etag as a long field).
internal static class IndexFieldNames
{
    /// <summary>The document id: one exact term (for update and delete by id), stored (returned with hits).</summary>
    public const string Id = "__id";

    /// <summary>The etag of the indexed body: stored and as numeric doc values, so a verify can compare the index with the store.</summary>
    public const string Etag = "__etag";
}
