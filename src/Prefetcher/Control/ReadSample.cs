namespace Indexing.Prefetcher;

/// <summary>
/// One completed read as the controller sees it: the bytes it brought, its documents (one: a
/// single Get; more: a MultiGet or a range read) and how long it took from issue to completion.
/// </summary>
internal readonly record struct ReadSample(long Bytes, int Documents, TimeSpan Latency);
