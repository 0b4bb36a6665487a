using System.Collections.Immutable;

namespace Indexing.Prefetcher;

// A contiguous run of documents in key order, FirstId..LastId, read as one unit (a range read, a
// sorted MultiGet, or a Get for a large document) and reserved in the budget as Bytes before it is
// issued. Etags[i] is the etag the scan listed for Ids[i], stamped on the document read, so meta is
// read once. Sequence numbers a run's tasks 0, 1, 2, ... in key order (the watermark relies on
// that); TargetBytes is the target it was cut against (0 for a large document); Ramp marks one of the
// run's first tasks cut below the target (TaskRamp). Immutable.
internal sealed record ReadTask(
    long Sequence,
    string FirstId,
    string LastId,
    int DocumentCount,
    long Bytes,
    bool IsLargeDocument,
    long TargetBytes,
    ImmutableArray<string> Ids,
    ImmutableArray<long> Etags,
    bool Ramp = false);
