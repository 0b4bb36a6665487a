using Indexing.Storage;
using RocksDbSharp;

namespace Indexing.Storage.Tests.Store;

/// <summary>
/// GetMemory's figures on a real RocksDB: memtables before a flush, block cache after; foreground Gets
/// count their own block cache hits and misses (a snapshot scan with fill_cache off does not); the
/// row cache serves a repeated Get; file reads count what range reads and giants in blob files cost.
/// </summary>
public sealed class StoreMemoryTests
{
    private static readonly FlushOptions WaitingFlush = new FlushOptions().SetWaitForFlush(true);

    [Fact]
    public void GetMemory_BeforeAndAfterFlush_MemtablesThenBlockCacheAndLimitsFromTheSettings()
    {
        using var temp = new TempStore();
        Load(temp.Store, 200);
        var unflushed = temp.Store.GetMemory();
        Assert.True(unflushed.MemtableBytes > 200 * 1000, unflushed.ToString());
        Assert.Equal(8L << 20, unflushed.BlockCacheCapacityBytes);
        Assert.Equal(0, unflushed.RowCacheCapacityBytes);
        Assert.Equal(224L << 20, unflushed.MemtableLimitBytes);

        Flush(temp.Store);
        temp.Store.Get("orders/00000007");
        var flushed = temp.Store.GetMemory();
        Assert.True(flushed.MemtableBytes < unflushed.MemtableBytes, flushed.ToString());
        Assert.True(flushed.BlockCacheUsageBytes > 0, flushed.ToString());
        Assert.True(flushed.TableReadersBytes >= 0, flushed.ToString());
        Assert.InRange(flushed.BlockCachePinnedBytes, 0, flushed.BlockCacheUsageBytes);
    }

    [Fact]
    public void ForegroundBlockCache_SameGetTwice_MissesFirstThenOnlyHits()
    {
        using var temp = new TempStore();
        Load(temp.Store, 200);
        Flush(temp.Store);
        var before = temp.Store.GetMemory().ForegroundBlockCache;

        Assert.NotNull(temp.Store.Get("orders/00000042"));
        var first = temp.Store.GetMemory().ForegroundBlockCache.Since(before);
        Assert.NotNull(temp.Store.Get("orders/00000042"));
        var second = temp.Store.GetMemory().ForegroundBlockCache.Since(before).Since(first);

        // The first read brought its data blocks in from the files; the same read again finds them all.
        Assert.True(first.Misses >= 1, first.ToString());
        Assert.Equal(0, second.Misses);
        Assert.True(second.Hits >= 2, second.ToString());
        Assert.Equal(1.0, second.HitRate);
    }

    [Fact]
    public void ForegroundBlockCache_SnapshotScanWithFillCacheOff_NotCountedButSeenByTheAllReadsTickers()
    {
        using var temp = new TempStore();
        Load(temp.Store, 200);
        Flush(temp.Store);
        var before = temp.Store.GetMemory();

        using (var snapshot = temp.Store.CreateSnapshot())
        {
            var bodies = new List<DocumentBody>();
            snapshot.ReadRange("orders/00000001", "orders/00000200", bodies);
            Assert.Equal(200, bodies.Count);
        }

        var after = temp.Store.GetMemory();
        Assert.Equal(before.ForegroundBlockCache, after.ForegroundBlockCache);
        var all = after.AllReadsBlockCache.Since(before.AllReadsBlockCache);
        Assert.True(all.Hits + all.Misses > 0, all.ToString());
    }

    [Fact]
    public async Task SnapshotReadRange_OfAFewDocuments_ReadsFromTheFilesAboutWhatTheRangeHolds()
    {
        using var temp = new TempStore();
        // About 6 MB that does not compress, in one file per family: a readahead of 2 MiB stays
        // inside the file, and the range is a small part of it.
        var random = new Random(7);
        temp.Store.PutMany(Enumerable.Range(1, 3000).Select(i => new DocumentWrite(
            $"orders/{i:D8}", TempStore.Json($$"""{"n": {{i}}, "pad": "{{Convert.ToBase64String(RandomBytes(random, 1500))}}"}"""))));
        await SettleAsync(temp.Store);

        var (bodies, read) = ReadRangeFromFiles(temp.Store, "orders/00001000", "orders/00001031");

        var returned = bodies.Sum(body => (long)body.Body.Length);
        Assert.Equal(32, bodies.Count);
        Assert.InRange(returned, 60_000, 70_000);
        // The range's blocks, and the readahead of a sequential read, not megabytes past its end
        // (a fixed 2 MiB readahead read 2 MiB here).
        Assert.InRange(read, returned, 4 * returned);
    }

    [Fact]
    public async Task SnapshotReadRange_EndingInsideAFile_ReadsNothingPastItsEnd()
    {
        using var temp = new TempStore(new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, rowCacheBytes: 0, directReads: true));
        // Direct reads, as issue 53 measured: every byte RocksDB's own readahead asks for comes from
        // the device. About 6 MB that does not compress, in one file: a range of 2 MB in the middle,
        // long enough for that readahead to grow to its largest (256 KiB).
        var random = new Random(11);
        temp.Store.PutMany(Enumerable.Range(1, 3000).Select(i => new DocumentWrite(
            $"orders/{i:D8}", TempStore.Json($$"""{"n": {{i}}, "pad": "{{Convert.ToBase64String(RandomBytes(random, 1500))}}"}"""))));
        await SettleAsync(temp.Store);

        var (bodies, read) = ReadRangeFromFiles(temp.Store, "orders/00001001", "orders/00002000");

        var returned = bodies.Sum(body => (long)body.Body.Length);
        Assert.Equal(1000, bodies.Count);
        // The range's blocks, its file's index and the block it ends in; unbounded, the last
        // readahead read 279 KB past the end here, and a rebuild of many ranges read about 0.2x
        // its store more.
        Assert.True(read - returned < 96 << 10, $"read {read:N0} bytes from the files for a range of {returned:N0}");
    }

    [Fact]
    public async Task SnapshotReadRange_EndingJustBeforeAGiant_DoesNotReadTheGiant()
    {
        using var temp = new TempStore();
        var random = new Random(13);
        // Every document about 2 KB, so 41 does not fill its block: inline, the giant after it
        // (4 MB as base64) would close the same block, and reading 41 would read the giant. In its
        // blob file, it is read only if the range steps past 41 onto its key.
        temp.Store.PutMany(Enumerable.Range(1, 60).Select(i => new DocumentWrite(
            $"orders/{i:D8}", TempStore.Json($$"""{"n": {{i}}, "pad": "{{Convert.ToBase64String(RandomBytes(random, i == 42 ? 3 << 20 : 1500))}}"}"""))));
        await SettleAsync(temp.Store);

        var (bodies, read) = ReadRangeFromFiles(temp.Store, "orders/00000031", "orders/00000041");

        Assert.Equal(11, bodies.Count);
        Assert.InRange(read, bodies.Sum(body => (long)body.Body.Length), 1L << 20);
    }

    [Fact]
    public async Task Giants_LiveInBlobFiles_ReadBackWholeByEveryReadCountedInFileBytesAndTheirSpaceComesBackAfterDelete()
    {
        using var temp = new TempStore();
        var random = new Random(17);
        // Two giants in blob files; a document just under the blob size stays inline.
        var pads = new Dictionary<int, int> { [20] = 1 << 20, [40] = 3 << 20, [50] = (int)(DocumentStore.MinBlobBytes * 3 / 4) - 2_000 };
        var written = Enumerable.Range(1, 60).ToDictionary(
            i => $"orders/{i:D8}",
            i => TempStore.Json($$"""{"n": {{i}}, "pad": "{{Convert.ToBase64String(RandomBytes(random, pads.GetValueOrDefault(i, 1500)))}}"}"""));
        Assert.InRange(written["orders/00000050"].Length, DocumentStore.MinBlobBytes - 10_000, DocumentStore.MinBlobBytes - 1);
        temp.Store.PutMany(written.Select(pair => new DocumentWrite(pair.Key, pair.Value)));
        await SettleAsync(temp.Store);

        var giants = written["orders/00000020"].Length + written["orders/00000040"].Length;
        var status = temp.Store.GetStatus();
        // Base64 of random bytes does not compress: the blob files hold the giants, and only them.
        Assert.InRange(status.LiveBlobFilesBytes, giants, giants + (DocumentStore.MinBlobBytes / 2));
        Assert.Equal(0, status.BlobGarbageBytes);
        // RocksDB's live data estimate counts them too (the demo's progress bar is sized by it).
        Assert.True(status.EstimatedLiveDataBytes >= giants, status.ToString());

        var before = temp.Store.GetMemory().FileBytesRead;
        Assert.Equal(written["orders/00000040"], temp.Store.Get("orders/00000040")!.Value.Body);
        // RocksDB counts a blob file's reads with the levels above the last: once, the giant and its pointer's block.
        Assert.InRange(temp.Store.GetMemory().FileBytesRead - before, written["orders/00000040"].Length, 2L * written["orders/00000040"].Length);
        using (var snapshot = temp.Store.CreateSnapshot())
        {
            var ranged = new List<DocumentBody>();
            snapshot.ReadRange("orders/00000001", "orders/00000060", ranged);
            var multi = new List<DocumentBody>();
            snapshot.MultiGet(["orders/00000019", "orders/00000020", "orders/00000040", "orders/00000050"], multi);
            Assert.Equal(written.OrderBy(pair => pair.Key, StringComparer.Ordinal).Select(pair => pair.Value), ranged.Select(body => body.Body));
            Assert.Equal([written["orders/00000019"], written["orders/00000020"], written["orders/00000040"], written["orders/00000050"]], multi.Select(body => body.Body));
            Assert.Equal(written["orders/00000020"], snapshot.Get("orders/00000020"));
        }

        Assert.NotNull(temp.Store.Delete("orders/00000020"));
        Assert.NotNull(temp.Store.Delete("orders/00000040"));
        await SettleAsync(temp.Store);

        // Compaction dropped the deleted giants' pointers; a blob file nothing points to is deleted.
        Assert.Equal(0, temp.Store.GetStatus().LiveBlobFilesBytes);
        Assert.Null(temp.Store.Get("orders/00000040"));
    }

    [Fact]
    public async Task FullRead_AfterASequentialLoad_ReadsTheFilesAboutOnceCompactionIncluded()
    {
        using var temp = new TempStore();
        // A load in key order, as a bulk load writes: each round is flushed to an L0 file of its
        // own, and from the fourth on compaction takes the oldest down. Files whose keys nothing
        // below overlaps, as here, could move down whole, uncompressed and with their sequence
        // numbers; the first snapshot released then had compaction rewrite every one of them, in
        // the middle of the first rebuild (a cold build over 582 MiB read 1,230 MiB).
        const int rounds = 9, perRound = 300;
        for (var round = 0; round < rounds; round++)
        {
            temp.Store.PutMany(Enumerable.Range((round * perRound) + 1, perRound).Select(i => new DocumentWrite(
                $"orders/{i:D8}", TempStore.Json($$"""{"n": {{i}}, "text": "{{string.Join(' ', Enumerable.Range(i, 300).Select(w => $"word{w % 997}"))}}"}"""))));
            FlushWithoutCompacting(temp.Store);
        }

        Assert.True(await temp.Store.WaitForCompactionsAsync(TimeSpan.FromMinutes(1)));
        var status = temp.Store.GetStatus();
        var onDisk = status.LiveSstFilesBytes + status.LiveBlobFilesBytes;
        var before = temp.Store.GetMemory().FileBytesRead;

        using (var snapshot = temp.Store.CreateSnapshot())
        {
            var bodies = new List<DocumentBody>();
            snapshot.ReadRange("orders/00000001", $"orders/{rounds * perRound:D8}", bodies);
            Assert.Equal(rounds * perRound, bodies.Count);
        }

        // Releasing the snapshot is when RocksDB marks bottom-level files that still carry
        // sequence numbers for a rewrite; let whatever it scheduled run.
        Assert.True(await temp.Store.WaitForCompactionsAsync(TimeSpan.FromMinutes(1)));
        var read = temp.Store.GetMemory().FileBytesRead - before;
        Assert.True(read <= onDisk * 1.2, $"read {read:N0} bytes from the files for {onDisk:N0} on disk ({(double)read / onDisk:F2}x)");
    }

    [Fact]
    public async Task WaitForCompactions_AfterALoad_ReturnsWhenNothingRunsOrIsPending()
    {
        using var temp = new TempStore();
        Load(temp.Store, 3000);
        // A flush that does not wait: the store has background work as the wait begins.
        Native.Instance.rocksdb_flush_cf(temp.Store.Db.Handle, new FlushOptions().SetWaitForFlush(false).Handle, temp.Store.DocsHandle.Handle);

        Assert.True(await temp.Store.WaitForCompactionsAsync(TimeSpan.FromMinutes(1)));

        Assert.False(temp.Store.BackgroundWorkPending());
    }

    [Fact]
    public void RowCache_On_RepeatedGetIsARowCacheHitAndTheCacheHoldsIt()
    {
        using var temp = new TempStore(new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20, rowCacheBytes: 4 << 20));
        Load(temp.Store, 50);
        Flush(temp.Store);

        temp.Store.Get("orders/00000003");
        var first = temp.Store.GetMemory();
        temp.Store.Get("orders/00000003");
        var second = temp.Store.GetMemory();

        Assert.Equal(4L << 20, second.RowCacheCapacityBytes);
        Assert.True(second.RowCacheUsageBytes > 0, second.ToString());
        Assert.True(first.RowCache.Misses >= 1, first.ToString());
        Assert.True(second.RowCache.Since(first.RowCache).Hits >= 1, second.ToString());
        Assert.Equal(0, second.RowCache.Since(first.RowCache).Misses);
        // Served from the row cache: no block was looked up for it.
        Assert.Equal(first.ForegroundBlockCache, second.ForegroundBlockCache);
    }

    [Fact]
    public void RowCache_Off_NoRowCacheLookups()
    {
        using var temp = new TempStore();
        Load(temp.Store, 50);
        Flush(temp.Store);

        temp.Store.Get("orders/00000003");
        temp.Store.Get("orders/00000003");

        var memory = temp.Store.GetMemory();
        Assert.Equal(new CacheCounts(0, 0), memory.RowCache);
        Assert.Equal(0, memory.RowCacheUsageBytes);
    }

    private static void Load(DocumentStore store, int count) =>
        store.PutMany(Enumerable.Range(1, count).Select(i => new DocumentWrite(
            $"orders/{i:D8}", TempStore.Json($$"""{"n": {{i}}, "pad": "{{new string('x', 1000 + (i % 7 * 100))}}"}"""))));

    private static byte[] RandomBytes(Random random, int count)
    {
        var bytes = new byte[count];
        random.NextBytes(bytes);
        return bytes;
    }

    // A range read and the bytes it took from the files: the least of three reads, each on a
    // snapshot of its own (fill_cache off: each reads the files alike). The counters are
    // store-wide, and a busy machine once added a background job's 4 MB to a single read.
    private static (List<DocumentBody> Bodies, long FileBytes) ReadRangeFromFiles(DocumentStore store, string firstId, string lastId)
    {
        List<DocumentBody> bodies = [];
        var least = long.MaxValue;
        for (var attempt = 0; attempt < 3; attempt++)
        {
            bodies = [];
            var before = store.GetMemory().FileBytesRead;
            using (var snapshot = store.CreateSnapshot())
            {
                snapshot.ReadRange(firstId, lastId, bodies);
            }

            least = Math.Min(least, store.GetMemory().FileBytesRead - before);
        }

        return (bodies, least);
    }

    // The files the reads will use, compacted and opened, so that the file reads measured next
    // are the reads' own: the counters are store-wide, and opening a file reads its index.
    private static async Task SettleAsync(DocumentStore store)
    {
        Flush(store);
        Assert.True(await store.WaitForCompactionsAsync(TimeSpan.FromMinutes(1)));
        Assert.NotNull(store.Get("orders/00000001"));
    }

    // One flush of docs and meta to a new L0 file each, waited for; compaction is left to RocksDB.
    private static void FlushWithoutCompacting(DocumentStore store)
    {
        Native.Instance.rocksdb_flush_cf(store.Db.Handle, WaitingFlush.Handle, store.DocsHandle.Handle);
        Native.Instance.rocksdb_flush_cf(store.Db.Handle, WaitingFlush.Handle, store.MetaHandle.Handle);
    }

    // Compacting the whole key range flushes the memtables first, so reads go to SST files (and the block cache).
    private static void Flush(DocumentStore store)
    {
        store.Db.CompactRange((byte[]?)null, null, store.DocsHandle);
        store.Db.CompactRange((byte[]?)null, null, store.MetaHandle);
    }
}
