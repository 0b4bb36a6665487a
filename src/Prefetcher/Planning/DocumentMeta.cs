namespace Indexing.Prefetcher;

// One row of the snapshot's metadata scan: a document id in key order, its exact stored size and
// its etag. The etag rides along into the read task so that every delivered document carries it
// without a second look at the meta column family.
internal readonly record struct DocumentMeta(string Id, long SizeBytes, long Etag);
