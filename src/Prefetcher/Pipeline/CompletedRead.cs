namespace Indexing.Prefetcher;

/// <summary>A finished read task: its documents in key order and their total size (already buffered in the budget).</summary>
internal sealed record CompletedRead(ReadTask Task, List<PrefetchedDocument> Documents, long Bytes);
