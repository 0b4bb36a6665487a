namespace Indexing.Prefetcher;

// One row of the snapshot's metadata scan: a document id in key order and its exact stored size.
internal readonly record struct DocumentMeta(string Id, long SizeBytes);
