using Indexing.Storage;
using Indexing.Testing;
using Xunit;

namespace Indexing.Storage.Tests;

// A read that fails in RocksDB (here a damaged data block, found by its checksum) must fail the
// call that made it. RocksDB ends an iteration on an error as it does at the end of the data, so a
// scan that did not ask which would end early and quietly: a rebuild would index part of the
// collection and swap it in as complete.
public sealed class ReadErrorTests
{
    private const int Documents = 400;

    // Enough change entries for a file of many blocks (each entry is a few dozen bytes).
    private const int ChangeFeedDocuments = 3000;

    [Fact]
    public void DamagedBlock_EveryReadOfItThrows_NamingRocksDbsError_AndBlocksElsewhereStillRead()
    {
        using var temp = new TempStore();
        var bodies = new Dictionary<string, byte[]>();
        for (var i = 0; i < Documents; i++)
        {
            var id = $"c/{i:D4}";
            bodies[id] = TempStore.Json($$"""{"n":{{i}},"text":"{{Convert.ToHexString(BitConverter.GetBytes(i * 2654435761L))}}{{new string('x', 400 + (i % 13))}}"}""");
        }

        temp.Store.PutMany(bodies.Select(pair => new DocumentWrite(pair.Key, pair.Value)));
        var damaged = new List<string>();
        damaged.AddRange(FlushToNewFiles(temp, temp.Store.DocsHandle));
        damaged.AddRange(FlushToNewFiles(temp, temp.Store.MetaHandle));
        Assert.Equal(2, damaged.Count);

        // The change feed stays in the write-ahead log, so the store opens; the first data block of
        // the bodies' file and of the metadata's file are overwritten.
        temp.Reopen(() => damaged.ForEach(DamageFirstDataBlock));
        using var snapshot = temp.Store.CreateSnapshot();

        var range = Assert.Throws<DocumentStoreException>(() => snapshot.ReadRange("c/0000", "c/0399", []));
        var multi = Assert.Throws<DocumentStoreException>(() => snapshot.MultiGet(["c/0001", "c/0002"], []));
        var single = Assert.Throws<DocumentStoreException>(() => snapshot.Get("c/0001"));
        var scan = Assert.Throws<DocumentStoreException>(() => snapshot.ScanMetadata("c").ToList());
        var foreground = Assert.Throws<DocumentStoreException>(() => temp.Store.Get("c/0001"));

        foreach (var error in new[] { range, multi, single, scan, foreground })
        {
            Assert.Contains("Corruption", error.Message, StringComparison.Ordinal);
            Assert.Contains(temp.Store.Path, error.Message, StringComparison.Ordinal);
        }

        Assert.Contains("Corruption", Assert.Throws<DocumentStoreException>(() => temp.Store.CountTombstoneRows()).Message, StringComparison.Ordinal);
        Assert.Contains("'c/0000'..'c/0399'", range.Message, StringComparison.Ordinal);
        Assert.Contains("metadata scan", scan.Message, StringComparison.Ordinal);
        // A body in an undamaged block of the same file still reads, by Get and by MultiGet.
        Assert.Equal(bodies["c/0399"], snapshot.Get("c/0399"));
        var last = new List<DocumentBody>();
        snapshot.MultiGet(["c/0398", "c/0399"], last);
        Assert.Equal([bodies["c/0398"], bodies["c/0399"]], last.Select(body => body.Body));
        // The failed reads freed their iterators.
        snapshot.Dispose();
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public void DamagedChangeFeed_ReadingItThrows_NamingRocksDbsError()
    {
        using var temp = new TempStore();
        temp.Store.PutMany(Enumerable.Range(0, ChangeFeedDocuments).Select(i => new DocumentWrite($"c/{i:D5}", TempStore.Json($$"""{"n":{{i}}}"""))));
        var file = Assert.Single(FlushToNewFiles(temp, temp.Store.ChangesHandle));

        // A block in the middle: the store's recovery at open reads the first block (the tombstone
        // state) and the last (the last etag), and both are intact.
        temp.Reopen(() => Damage(file, new FileInfo(file).Length / 3));

        Assert.Equal(ChangeFeedDocuments, temp.Store.GetStatus().LastEtag);
        var error = Assert.Throws<DocumentStoreException>(() => temp.Store.ReadChanges(0).Count());
        Assert.Contains("change feed", error.Message, StringComparison.Ordinal);
        Assert.Contains("Corruption", error.Message, StringComparison.Ordinal);
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public void DamagedChangeFeed_OpenThrowsNamingRocksDbsError_AndReleasesTheStoreForTheNextOpen()
    {
        using var temp = new TempStore();
        temp.Store.PutMany(Enumerable.Range(0, Documents).Select(i => new DocumentWrite($"c/{i:D4}", TempStore.Json($$"""{"n":{{i}}}"""))));
        var files = FlushToNewFiles(temp, temp.Store.ChangesHandle);
        var file = Assert.Single(files);
        var original = File.ReadAllBytes(file);

        // The first block holds the tombstone state, which the open reads.
        var error = Assert.Throws<DocumentStoreException>(() => temp.Reopen(() => DamageFirstDataBlock(file)));

        Assert.Contains("Corruption", error.Message, StringComparison.Ordinal);
        Assert.Contains(temp.Directory, error.Message, StringComparison.Ordinal);
        // A corrupt store is not reported as one open elsewhere.
        Assert.DoesNotContain("Another process", error.Message, StringComparison.Ordinal);
        // The failed open released RocksDB's lock: with the file mended, the store opens here again.
        File.WriteAllBytes(file, original);
        using var reopened = DocumentStore.Open(temp.Directory, temp.Options);
        Assert.Equal(Documents, reopened.ReadChanges(0).Count());
    }

    private static readonly RocksDbSharp.FlushOptions WaitingFlush = new RocksDbSharp.FlushOptions().SetWaitForFlush(true);

    // Flushes one column family's memtable to an L0 file, uncompressed (a compaction would write
    // the base level, LZ4, in fewer blocks than the damage needs); returns the files that appeared.
    private static List<string> FlushToNewFiles(TempStore temp, RocksDbSharp.ColumnFamilyHandle family)
    {
        var before = Directory.GetFiles(temp.Directory, "*.sst").ToHashSet();
        RocksDbSharp.Native.Instance.rocksdb_flush_cf(temp.Store.Db.Handle, WaitingFlush.Handle, family.Handle);
        return Directory.GetFiles(temp.Directory, "*.sst").Where(file => !before.Contains(file)).ToList();
    }

    private static void DamageFirstDataBlock(string file) => Damage(file, 100);

    // Overwrites 256 bytes at the offset; the file must hold several data blocks.
    private static void Damage(string file, long offset)
    {
        using var stream = new FileStream(file, FileMode.Open, FileAccess.ReadWrite);
        Assert.True(stream.Length > 8192, $"{file} has {stream.Length} bytes; the test needs more than one data block.");
        stream.Position = offset;
        stream.Write(Enumerable.Repeat((byte)0xA5, 256).ToArray());
    }
}
