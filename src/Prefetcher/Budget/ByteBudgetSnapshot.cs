namespace Indexing.Prefetcher;

// One consistent reading of a ByteBudget for the pressure view: all fields are taken under the
// budget's lock at the same instant. In flight vs buffered tells a slow disk from a slow indexer.
internal readonly record struct ByteBudgetSnapshot(
    long Limit,
    long InFlightBytes,
    long BufferedBytes,
    int WaitingCount,
    long HighWaterMarkBytes,
    long LargestOversizedAdmission,
    long Overcommits)
{
    public long UsedBytes => InFlightBytes + BufferedBytes;
}
