using RocksDbSharp;

namespace Indexing.Storage;

// The RocksDB configuration of the store, one named decision each, built once per open and kept
// alive with the store (RocksDbSharp frees these native objects in finalizers, so they must stay
// referenced while the database uses them).
internal sealed class StoreTuning
{
    // Bits per key of the bloom filters: ~1% false positives, the usual point-lookup trade.
    private const int BloomBitsPerKey = 10;

    // docs: bodies are KBs to MBs; 16 KiB blocks compress JSON better than 4 KiB and a point read
    // of a small document costs one block either way.
    private const ulong DocsBlockBytes = 16 << 10;

    // meta and changes: 17-byte values, read by scans and point lookups; small blocks.
    private const ulong SmallBlockBytes = 4 << 10;

    // Memtable size per column family. Bulk loads of large documents fill 64 MiB quickly; bigger
    // memtables mean fewer, larger L0 files and less write amplification.
    private const ulong DocsWriteBufferBytes = 64 << 20;
    private const ulong SmallWriteBufferBytes = 16 << 20;

    /// <summary>
    /// The largest memtable of any column family. After a write fails for no space, RocksDB's
    /// SstFileManager resumes writes only once the volume has this much free (its reserved disk
    /// buffer: the largest write_buffer_size), so the memtables can be flushed.
    /// </summary>
    public const long LargestWriteBufferBytes = (long)DocsWriteBufferBytes;

    // Memtables per column family: the one being written and one being flushed (RocksDB's default,
    // set here so the memory bound below holds by construction); a third would stall writes instead.
    private const int WriteBuffersPerFamily = 2;

    // meta: an SST file with at least this many deletes in any window of this many entries is
    // marked for compaction (RocksDB's compact-on-deletion collector). Purged tombstones leave a
    // delete marker each, which every metadata scan steps over until compaction drops it.
    private const int DeletionWindowEntries = 256;
    private const int DeletionTriggerEntries = 128;

    private static readonly Compression[] _compressionPerLevel =
        [Compression.No, Compression.Lz4, Compression.Lz4, Compression.Lz4, Compression.Lz4, Compression.Lz4, Compression.Lz4];

    public StoreTuning(StoreOptions options)
    {
        BlockCache = options.BlockCacheBytes > 0 ? Cache.CreateLru((ulong)options.BlockCacheBytes) : null;
        RowCache = options.RowCacheBytes > 0 ? Cache.CreateLru((ulong)options.RowCacheBytes) : null;

        Db = new DbOptions()
            .SetCreateIfMissing(true)
            .SetCreateMissingColumnFamilies(true)
            // Flushes and compactions on every core: a rebuild's reads compete with them, but a
            // compaction backlog stalls writes, which is worse for a live database.
            .IncreaseParallelism(Math.Max(2, Environment.ProcessorCount))
            // Write back SST and WAL data in 1 MiB steps instead of one burst at fsync time, so
            // foreground reads do not see multi-second write-back stalls.
            .SetBytesPerSync(1 << 20)
            .SetKeepLogFileNum(5)
            // RocksDB has no per-read direct I/O switch: this is DB-wide (StoreOptions.DirectReads).
            .SetUseDirectReads(options.DirectReads)
            // Statistics for the status page (rocksdb.stats); a few percent of CPU at most.
            .EnableStatistics();
        if (RowCache is not null)
        {
            // Whole values found by point reads (Get, MultiGet: foreground reads and query results),
            // so a hot document costs no block lookup, decompression or copy out of a 16 KiB block.
            // RocksDbSharp's DbOptions has no setter for it; the C API's is in Native.
            Native.Instance.rocksdb_options_set_row_cache(Db.Handle, RowCache.Handle);
        }

        Families = new ColumnFamilies(Family(SmallBlockBytes, SmallWriteBufferBytes, bloom: false))
        {
            { DocumentStore.DocsFamily, BlobFiles(Family(DocsBlockBytes, DocsWriteBufferBytes, bloom: true)) },
            { DocumentStore.MetaFamily, CompactOnDeletions(Family(SmallBlockBytes, SmallWriteBufferBytes, bloom: true)) },
            // The change feed is only ever scanned in etag order from a starting point: a bloom
            // filter would never be consulted.
            { DocumentStore.ChangesFamily, Family(SmallBlockBytes, SmallWriteBufferBytes, bloom: false) },
        };
    }

    public DbOptions Db { get; }

    public ColumnFamilies Families { get; }

    public Cache? BlockCache { get; }

    public Cache? RowCache { get; }

    /// <summary>The most memtables can hold over the four column families (default, docs, meta, changes).</summary>
    public long MemtableLimitBytes { get; } = (long)(DocsWriteBufferBytes + (3 * SmallWriteBufferBytes)) * WriteBuffersPerFamily;

    // docs: bodies of DocumentStore.MinBlobBytes and more go to blob files, the SST keeping a
    // pointer (RocksDB's integrated BlobDB). Inline, a giant shares its block with the small
    // documents written just before it, so reading those reads the giant too, and the giant's own
    // read reads it again. In a blob file a giant is read once, by its own read. 256 KiB is 16
    // blocks: a smaller value costs its neighbours little.
    //
    // LZ4 like the deeper levels: blob files are written at flush and never recompressed by
    // compaction, and compressing giants at flush did not slow a load (docs/decisions/0009;
    // benchmarks/results/README.md, "Other figures").
    private static ColumnFamilyOptions BlobFiles(ColumnFamilyOptions family)
    {
        // The binding's ColumnFamilyOptions has no setters for these; the C API's are in Native.
        Native.Instance.rocksdb_options_set_enable_blob_files(family.Handle, 1);
        Native.Instance.rocksdb_options_set_min_blob_size(family.Handle, DocumentStore.MinBlobBytes);
        Native.Instance.rocksdb_options_set_blob_compression_type(family.Handle, (int)Compression.Lz4);
        // Compaction relocates the live blobs of the oldest quarter of blob files (RocksDB's
        // default cutoff), so the space of deleted or replaced giants comes back.
        Native.Instance.rocksdb_options_set_enable_blob_gc(family.Handle, 1);
        return family;
    }

    private static ColumnFamilyOptions CompactOnDeletions(ColumnFamilyOptions family)
    {
        Native.Instance.rocksdb_options_add_compact_on_deletion_collector_factory(family.Handle, DeletionWindowEntries, DeletionTriggerEntries);
        return family;
    }

    private ColumnFamilyOptions Family(ulong blockBytes, ulong writeBufferBytes, bool bloom)
    {
        var table = new BlockBasedTableOptions()
            .SetBlockSize(blockBytes)
            .SetFormatVersion(5);
        table = BlockCache is null
            ? table.SetNoBlockCache(true)
            // Index and filter blocks live in the block cache (bounded memory), with L0's pinned
            // so the newest files never miss. RocksDB refuses this without a block cache.
            : table.SetBlockCache(BlockCache).SetCacheIndexAndFilterBlocks(true).SetPinL0FilterAndIndexBlocksInCache(true);
        if (bloom)
        {
            // docs and meta are read by id: Get, MultiGet, and the "does it exist" lookup of every put.
            // The native policy is owned by the table options it is given to (a shared_ptr), so
            // each table gets its own, and no managed wrapper whose finalizer would free it again.
            table = table.SetFilterPolicy(Native.Instance.rocksdb_filterpolicy_create_bloom_full(BloomBitsPerKey));
        }

        return new ColumnFamilyOptions()
            .SetBlockBasedTableFactory(table)
            // Leveled compaction with dynamic level sizes: bounded space amplification (~1.1x),
            // which matters more for a source of truth than the extra write amplification.
            .SetCompactionStyle(Compaction.Level)
            .SetLevelCompactionDynamicLevelBytes(true)
            // No compression in L0, LZ4 from the base level down. Compressing at flush time slows a
            // bulk load several times over on few cores, where flushes compete with the writer
            // (benchmarks/results/README.md, "Other figures"); compaction compresses in the
            // background, and JSON compresses 2-4x. With dynamic level sizes the array's second
            // entry is the base level, the one L0 compacts into (L6 while the store is small).
            // Left uncompressed too, a load in key order (L0 files that overlap nothing) had its
            // files moved down whole, uncompressed and with their sequence numbers, and the first
            // snapshot released (a rebuild's) had compaction rewrite every one of them in the
            // middle of that rebuild: a cold build read 2.1x the store (issue 53).
            .SetCompressionPerLevel(_compressionPerLevel, (ulong)_compressionPerLevel.Length)
            .SetWriteBufferSize(writeBufferBytes)
            .SetMaxWriteBufferNumber(WriteBuffersPerFamily);
    }
}
