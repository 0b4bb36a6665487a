using System.Collections.Immutable;

namespace Indexing.Prefetcher;

// A contiguous run of documents in key order, read as one unit (one sorted MultiGet, or one Get
// for a large document) and reserved in the byte budget as Bytes before it is issued.
// Ids are in key order, FirstId..LastId inclusive; their number is bounded by
// PlanOptions.MaxDocumentsPerTask, so holding them is bounded too. TargetBytes is the clamped
// target the task was cut against (0 for a large document, which is never cut against a target).
// Immutable, so it can be handed between threads freely.
internal sealed record ReadTask(
    long Sequence,
    string FirstId,
    string LastId,
    int DocumentCount,
    long Bytes,
    bool IsLargeDocument,
    long TargetBytes,
    ImmutableArray<string> Ids);
