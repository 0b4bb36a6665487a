using System.Diagnostics;

namespace Indexing.Prefetcher.Tests;

/// <summary>
/// The indexer the strategy figures read into, modelled as a fixed rate (10 ns per byte, 100 MB/s):
/// each batch costs its bytes at that rate from when it arrived, and the consuming thread is busy
/// (blocked) meanwhile, as with real indexing. Thread.Sleep, because Task.Delay overshot by ~15 ms
/// per call here, which would understate every rate.
/// </summary>
internal static class ModelledIndexer
{
    public const double BytesPerSecond = 100_000_000;

    /// <summary>Takes every batch of <paramref name="prefetcher"/> at the modelled rate; fails after 10 minutes (a hang guard).</summary>
    public static Task<ModelledIndexerRun> ConsumeAsync(IBatchSource prefetcher) =>
        Task.Run(async () =>
        {
            var stopwatch = Stopwatch.StartNew();
            long bytes = 0;
            var count = 0;
            var indexedUntil = TimeSpan.Zero;
            await foreach (var batch in prefetcher.ReadAllAsync(1024, 16 * TestCollections.MiB).ConfigureAwait(false))
            {
                bytes += batch.TotalBytes;
                count += batch.Count;
                var arrived = stopwatch.Elapsed;
                indexedUntil = (indexedUntil > arrived ? indexedUntil : arrived) + TimeSpan.FromSeconds(batch.TotalBytes / BytesPerSecond);
                var due = indexedUntil - stopwatch.Elapsed;
                if (due > TimeSpan.Zero)
                {
                    Thread.Sleep(due);
                }
            }

            return new ModelledIndexerRun(bytes, count, stopwatch.Elapsed);
        }).WaitAsync(TimeSpan.FromMinutes(10));
}

/// <summary>What the modelled indexer took, and how long it took.</summary>
internal readonly record struct ModelledIndexerRun(long Bytes, int Documents, TimeSpan Elapsed)
{
    public double MegabytesPerSecond => Bytes / Elapsed.TotalSeconds / 1e6;
}
