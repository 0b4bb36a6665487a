namespace Indexing.Prefetcher;

// A DocumentSizeHistogram reading for the controller and the pressure view. Percentiles are of
// the decayed distribution, in bytes, within bucket precision (about 6%) and never above Max.
// Max is exact: the largest document recorded within the histogram's recent window (0 if none),
// and LargestRecentId names it (null if none). WeightedCount is the decayed number of documents.
public readonly record struct SizeDistribution(
    long P50,
    long P90,
    long P99,
    long Max,
    string? LargestRecentId,
    double WeightedCount);
