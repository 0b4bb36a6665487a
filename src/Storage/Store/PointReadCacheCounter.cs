using RocksDbSharp;

namespace Indexing.Storage;

/// <summary>
/// Block cache hits and misses of the reads between Begin and End on the calling thread, summed
/// over every thread. RocksDB's perf context is thread-local: its level is switched on for the
/// read only, and the context is reset first, so other reads on the same thread never count.
/// </summary>
/// <remarks>Threading: Begin and End on the reading thread; the sums are Interlocked, read from any thread.</remarks>
internal sealed class PointReadCacheCounter
{
    // The C API's handle on this thread's perf context: a small wrapper made once per thread that
    // reads, and only ever used on that thread (so never after the thread and its context are gone).
    [ThreadStatic]
    private static IntPtr t_context;

    private long _hits;
    private long _misses;

    public static void Begin()
    {
        var native = Native.Instance;
        native.rocksdb_set_perf_level(PerfLevel.EnableCount);
        if (t_context == IntPtr.Zero)
        {
            t_context = native.rocksdb_perfcontext_create();
        }

        native.rocksdb_perfcontext_reset(t_context);
    }

    public void End()
    {
        var native = Native.Instance;
        Interlocked.Add(ref _hits, (long)native.rocksdb_perfcontext_metric(t_context, PerfMetric.BlockCacheHitCount));
        // A block read from the file is a block the cache did not have.
        Interlocked.Add(ref _misses, (long)native.rocksdb_perfcontext_metric(t_context, PerfMetric.BlockReadCount));
        native.rocksdb_set_perf_level(PerfLevel.Disable);
    }

    public CacheCounts Read() => new(Interlocked.Read(ref _hits), Interlocked.Read(ref _misses));
}
