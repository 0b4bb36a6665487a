namespace Indexing.Prefetcher;

// One consistent reading of a ByteBudget for the pressure view: all fields are taken under the
// budget's lock at the same instant. In flight vs buffered tells a slow disk from a slow indexer.
//   HighWaterMarkBytes: the largest InFlight + Buffered ever observed, except a lone oversized
//     admission (LargestOversizedAdmission tracks those). Overcommits count in it: they really did
//     exceed the budget. It is relative to the limit in force at the time, so after the limit is
//     lowered it may exceed the current Limit.
//   Overcommits: reads whose actual size exceeded their reservation. Sizes come from the same
//     snapshot as the data, so anything but zero points at a sizing bug upstream.
//   WaitedReservations: reservations that had to queue (cancelled and closed waiters are not
//     counted). How long reads waited for budget is measured by the pipeline's meter
//     (ProducerBlockedPercent), so the budget does not time it a second time.
internal readonly record struct ByteBudgetSnapshot(
    long Limit,
    long InFlightBytes,
    long BufferedBytes,
    int WaitingCount,
    long HighWaterMarkBytes,
    long LargestOversizedAdmission,
    long Overcommits,
    long WaitedReservations)
{
    public long UsedBytes => InFlightBytes + BufferedBytes;
}
