using System.Collections.Immutable;

namespace Indexing.Prefetcher;

// A contiguous run of documents in key order, read as one unit (one bounded range read or one
// sorted MultiGet, or one Get for a large document) and reserved in the byte budget as Bytes
// before it is issued. Ids are in key order, FirstId..LastId inclusive; Etags[i] is the etag the
// metadata scan listed for Ids[i] (the source stamps it on the document it reads, so meta is read
// once). Their number is bounded by PlanOptions.MaxDocumentsPerTask, so holding them is bounded
// too. Sequence numbers the tasks of a run 0, 1, 2, ... in key order (the watermark relies on
// that). TargetBytes is the clamped target the task was cut against (0 for a large document,
// which is never cut against a target). Immutable, so it can be handed between threads freely.
internal sealed record ReadTask(
    long Sequence,
    string FirstId,
    string LastId,
    int DocumentCount,
    long Bytes,
    bool IsLargeDocument,
    long TargetBytes,
    ImmutableArray<string> Ids,
    ImmutableArray<long> Etags);
