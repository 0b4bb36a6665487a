using RocksDbSharp;

namespace Indexing.Storage.Tests.Store;

/// <summary>
/// What one full metadata scan costs, counted rather than timed: the rows it reads (live documents
/// and tombstone rows) plus the internal entries RocksDB steps over without showing them (older
/// versions and delete markers not yet dropped by compaction), from RocksDB's perf context. The
/// perf context is per thread: the scan runs on the caller's thread, enumerated synchronously.
/// </summary>
internal readonly record struct ScanCost(long LiveRows, long TombstoneRows, long SkippedInternalEntries)
{
    public long Total => LiveRows + TombstoneRows + SkippedInternalEntries;

    public static ScanCost Measure(DocumentStore store)
    {
        var native = Native.Instance;
        native.rocksdb_set_perf_level(PerfLevel.EnableCount);
        var context = native.rocksdb_perfcontext_create();
        try
        {
            native.rocksdb_perfcontext_reset(context);
            var live = store.ScanMetadata().LongCount();
            var skipped = (long)(native.rocksdb_perfcontext_metric(context, PerfMetric.InternalKeySkippedCount)
                + native.rocksdb_perfcontext_metric(context, PerfMetric.InternalDeleteSkippedCount));
            return new ScanCost(live, store.CountTombstoneRows(), skipped);
        }
        finally
        {
            native.rocksdb_perfcontext_destroy(context);
            native.rocksdb_set_perf_level(PerfLevel.Disable);
        }
    }

    public override string ToString() => $"{LiveRows} live rows + {TombstoneRows} tombstone rows + {SkippedInternalEntries} internal entries stepped over = {Total}";
}
