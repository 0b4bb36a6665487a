using Indexing.Storage;

namespace Indexing.Storage.Tests.Store;

public sealed class DocumentStoreReadTests
{
    [Fact]
    public void ScanMetadata_OneCollection_KeyOrderExactSizesNoNeighbours()
    {
        using var temp = new TempStore();
        temp.Store.Put("orders/2", """{"b":22}""");
        temp.Store.Put("orders/10", """{"a":1}""");
        temp.Store.Put("ordersX/1", """{}""");
        temp.Store.Put("order/1", """{}""");
        temp.Store.Put("users/1", """{}""");
        temp.Store.Put("orders/3", """{}""");
        temp.Store.Delete("orders/3");

        var rows = temp.Store.ScanMetadata("orders").ToList();

        Assert.Equal(["orders/10", "orders/2"], rows.Select(r => r.Id));
        Assert.Equal([7L, 8L], rows.Select(r => r.SizeBytes));
        Assert.Equal([2L, 1L], rows.Select(r => r.Etag));
        Assert.Equal(5, temp.Store.ScanMetadata().Count());
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public void ScanMetadata_BadCollection_ThrowsNamingIt()
    {
        using var temp = new TempStore();

        var error = Assert.Throws<ArgumentException>(() => temp.Store.ScanMetadata("a/b"));

        Assert.Contains("'a/b'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ReadChanges_AfterEtag_IsEtagOrderedAndBounded()
    {
        using var temp = new TempStore();
        for (var i = 0; i < 10; i++)
        {
            temp.Store.Put($"c/{i}", "{}");
        }

        var changes = temp.Store.ReadChanges(afterEtag: 4, maxEntries: 3).ToList();

        Assert.Equal([5L, 6L, 7L], changes.Select(c => c.Etag));
        Assert.Equal(["c/4", "c/5", "c/6"], changes.Select(c => c.Id));
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public void Get_RecordsForegroundLatency_GetManyDoesNot()
    {
        using var temp = new TempStore();
        temp.Store.Put("c/1", "{}");

        for (var i = 0; i < 25; i++)
        {
            temp.Store.Get(i % 2 == 0 ? "c/1" : "c/missing");
        }

        temp.Store.GetMany(["c/1", "c/1"]);

        Assert.Equal(25, temp.Store.ForegroundReadLatency.Snapshot(TimeSpan.FromSeconds(60)).Count);
    }

    [Fact]
    public void GetMany_ReturnsCallersOrder_WithNullForAbsentAndDeleted()
    {
        using var temp = new TempStore();
        temp.Store.Put("c/b", """{"v":"b"}""");
        temp.Store.Put("c/a", """{"v":"a"}""");
        temp.Store.Put("c/gone", "{}");
        temp.Store.Delete("c/gone");

        var documents = temp.Store.GetMany(["c/b", "c/none", "c/a", "c/gone"]);

        Assert.Equal("""{"v":"b"}""", TempStore.Text(documents[0]!.Value.Body));
        Assert.Null(documents[1]);
        Assert.Equal("""{"v":"a"}""", TempStore.Text(documents[2]!.Value.Body));
        Assert.Equal(2, documents[2]!.Value.Etag);
        Assert.Null(documents[3]);
    }

    [Fact]
    public void Snapshot_HidesLaterWrites_InEveryReadPath()
    {
        using var temp = new TempStore();
        for (var i = 0; i < 5; i++)
        {
            temp.Store.Put($"c/{i}", $$"""{"v":{{i}}}""");
        }

        using var snapshot = temp.Store.CreateSnapshot();
        temp.Store.Put("c/1", """{"v":"changed"}""");
        temp.Store.Put("c/5", "{}");
        temp.Store.Delete("c/2");

        Assert.Equal(5, snapshot.Etag);
        Assert.Equal(["c/0", "c/1", "c/2", "c/3", "c/4"], snapshot.ScanMetadata("c").Select(m => m.Id));
        Assert.Equal(2, snapshot.ScanMetadata("c").Single(m => m.Id == "c/1").Etag);
        var range = new List<DocumentBody>();
        snapshot.ReadRange("c/1", "c/3", range);
        Assert.Equal(["c/1", "c/2", "c/3"], range.Select(d => d.Id));
        Assert.Equal("""{"v":1}""", TempStore.Text(range[0].Body));
        var many = new List<DocumentBody>();
        snapshot.MultiGet(["c/2", "c/4"], many);
        Assert.Equal("""{"v":2}""", TempStore.Text(many[0].Body));
        Assert.Null(snapshot.Get("c/5"));
        Assert.Equal("""{"v":1}""", TempStore.Text(snapshot.Get("c/1")!));
        Assert.Equal("""{"v":2}""", TempStore.Text(snapshot.Get("c/2")!));
        Assert.Equal([6L, 7L, 8L], temp.Store.ReadChanges(snapshot.Etag).Select(c => c.Etag));
    }

    [Fact]
    public void Snapshot_ScanAfterKey_ResumesStrictlyAfterIt()
    {
        using var temp = new TempStore();
        foreach (var id in new[] { "c/1", "c/2", "c/3", "d/1" })
        {
            temp.Store.Put(id, "{}");
        }

        using var snapshot = temp.Store.CreateSnapshot();

        Assert.Equal(["c/3"], snapshot.ScanMetadata("c", startAfterId: "c/2").Select(m => m.Id));
        Assert.Equal(["c/1", "c/2", "c/3"], snapshot.ScanMetadata("c", startAfterId: "b/9").Select(m => m.Id));
        Assert.Equal(["c/3", "d/1"], snapshot.ScanMetadata(startAfterId: "c/2").Select(m => m.Id));
        Assert.Equal(["c/2", "c/3"], snapshot.ScanMetadata("c", startAfterId: "c/15").Select(m => m.Id));
    }

    [Fact]
    public void Snapshot_MultiGet_ReturnsEveryBodyByteForByte_FromFilesAndMemtable_InTheCallersOrder()
    {
        using var temp = new TempStore();
        var written = new Dictionary<string, byte[]>();
        for (var i = 0; i < StoreSnapshotSourceMultiGetMax; i++)
        {
            // Ids of different lengths, so that each key's place in the call's one key buffer differs.
            var id = $"c/{i:D2}{new string('k', i % 5)}";
            written[id] = TempStore.Json($$"""{"n":{{i}},"pad":"{{new string((char)('a' + (i % 26)), 40 * i)}}"}""");
            temp.Store.Put(id, written[id]);
            if (i == StoreSnapshotSourceMultiGetMax / 2)
            {
                // The first half in an SST file, the rest in the memtable.
                temp.Store.Db.CompactRange((byte[]?)null, null, temp.Store.DocsHandle);
            }
        }

        using var snapshot = temp.Store.CreateSnapshot();
        temp.Store.Put("c/03kkk", """{"changed":true}""");
        var ids = written.Keys.Reverse().ToArray();
        var bodies = new List<DocumentBody>();

        snapshot.MultiGet(ids, bodies);

        Assert.Equal(ids, bodies.Select(body => body.Id));
        Assert.All(bodies, body => Assert.Equal(written[body.Id], body.Body));
    }

    // StoreSnapshotSource.MultiGetMaxDocuments: the most the prefetcher reads by one MultiGet.
    private const int StoreSnapshotSourceMultiGetMax = 32;

    [Fact]
    public void Snapshot_MultiGetOfAbsentId_ThrowsNamingIt()
    {
        using var temp = new TempStore();
        temp.Store.Put("c/1", "{}");
        using var snapshot = temp.Store.CreateSnapshot();

        var error = Assert.Throws<InvalidOperationException>(() => snapshot.MultiGet(["c/1", "c/9"], []));

        Assert.Contains("'c/9'", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Snapshot_ReadRangeBackwards_Throws()
    {
        using var temp = new TempStore();
        using var snapshot = temp.Store.CreateSnapshot();

        Assert.Throws<ArgumentException>(() => snapshot.ReadRange("c/9", "c/1", []));
    }

    [Fact]
    public void Status_CountsOpenSnapshotsAndScans_AndReportsRocksDbFigures()
    {
        using var temp = new TempStore();
        temp.Store.Put("c/1", "{}");
        temp.Store.Put("c/2", "{}");
        var snapshot = temp.Store.CreateSnapshot();
        using var scan = snapshot.ScanMetadata("c").GetEnumerator();
        Assert.True(scan.MoveNext());

        var during = temp.Store.GetStatus();
        scan.Dispose();
        snapshot.Dispose();
        snapshot.Dispose();
        var after = temp.Store.GetStatus();

        Assert.Equal(1, during.OpenSnapshots);
        Assert.Equal(1, during.OpenIterators);
        Assert.Equal(0, after.OpenSnapshots);
        Assert.Equal(0, after.OpenIterators);
        Assert.Equal(2, after.LastEtag);
        Assert.Contains("Compaction Stats", after.RocksDbStats, StringComparison.Ordinal);
        Assert.True(after.MemtableBytes > 0);
    }

    [Fact]
    public void DisposingSnapshot_EndsItsOpenScan()
    {
        using var temp = new TempStore();
        temp.Store.Put("c/1", "{}");
        temp.Store.Put("c/2", "{}");
        var snapshot = temp.Store.CreateSnapshot();
        using var scan = snapshot.ScanMetadata("c").GetEnumerator();
        Assert.True(scan.MoveNext());

        snapshot.Dispose();

        Assert.Throws<ObjectDisposedException>(() => scan.MoveNext());
        Assert.Throws<ObjectDisposedException>(() => snapshot.Get("c/1"));
        temp.AssertNoOpenHandles();
    }
}
