namespace Indexing.Prefetcher;

// A DocumentSizeHistogram reading. Percentiles are of the decayed distribution, in bytes, within
// about 6% and never above Max, the exact largest document of the recent window (0 if none), which
// LargestRecentId names. WeightedCount is the decayed number of documents.
public readonly record struct SizeDistribution(
    long P50,
    long P90,
    long P99,
    long Max,
    string? LargestRecentId,
    double WeightedCount);
