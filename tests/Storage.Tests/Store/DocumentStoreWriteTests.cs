using Indexing.Storage;

namespace Indexing.Storage.Tests.Store;

public sealed class DocumentStoreWriteTests
{
    [Fact]
    public void Put_ThenGet_ReturnsBodyAndEtag()
    {
        using var temp = new TempStore();
        var etag = temp.Store.Put("orders/1", TempStore.Json("""{"total":10}"""));

        var document = temp.Store.Get("orders/1");

        Assert.NotNull(document);
        Assert.Equal(1, etag);
        Assert.Equal(etag, document.Value.Etag);
        Assert.Equal("""{"total":10}""", TempStore.Text(document.Value.Body));
        Assert.Equal(1, temp.Store.LastEtag);
        temp.AssertNoOpenHandles();
    }

    [Fact]
    public void Put_Replacing_KeepsOneChangeEntryPerDocument()
    {
        using var temp = new TempStore();
        temp.Store.Put("orders/1", """{"v":1}""");
        temp.Store.Put("orders/2", """{"v":1}""");
        var latest = temp.Store.Put("orders/1", """{"v":2}""");

        var changes = temp.Store.ReadChanges(0).ToList();

        Assert.Equal([2L, 3L], changes.Select(c => c.Etag));
        Assert.Equal(["orders/2", "orders/1"], changes.Select(c => c.Id));
        Assert.Equal(latest, temp.Store.GetMetadata("orders/1")!.Value.Etag);
        Assert.Equal("""{"v":2}""".Length, changes[1].SizeBytes);
    }

    [Fact]
    public void Etags_SurviveRestart_AndKeepGrowing()
    {
        using var temp = new TempStore();
        temp.Store.Put("a/1", """{}""");
        temp.Store.Put("a/2", """{}""");
        temp.Store.Delete("a/1");

        temp.Reopen();

        Assert.Equal(3, temp.Store.LastEtag);
        Assert.Equal(4, temp.Store.Put("a/3", """{}"""));
        Assert.Null(temp.Store.Get("a/1"));
        Assert.NotNull(temp.Store.Get("a/2"));
    }

    [Fact]
    public void Delete_WritesOneDeletedChange_AndAbsentIdWritesNothing()
    {
        using var temp = new TempStore();
        temp.Store.Put("orders/1", """{}""");

        var deleted = temp.Store.Delete("orders/1");
        var again = temp.Store.Delete("orders/1");
        var never = temp.Store.Delete("orders/404");

        Assert.Equal(2, deleted);
        Assert.Null(again);
        Assert.Null(never);
        Assert.Equal(2, temp.Store.LastEtag);
        var change = Assert.Single(temp.Store.ReadChanges(0));
        Assert.True(change.Deleted);
        Assert.Equal("orders/1", change.Id);
        Assert.Null(temp.Store.Get("orders/1"));
        Assert.Null(temp.Store.GetMetadata("orders/1"));
        Assert.Empty(temp.Store.ScanMetadata("orders"));
    }

    [Fact]
    public void Put_AfterDelete_RemovesTheDeletesChangeEntry()
    {
        using var temp = new TempStore();
        temp.Store.Put("orders/1", """{}""");
        temp.Store.Delete("orders/1");
        temp.Store.Put("orders/1", """{"back":true}""");

        var change = Assert.Single(temp.Store.ReadChanges(0));

        Assert.Equal(3, change.Etag);
        Assert.False(change.Deleted);
    }

    public static TheoryData<string, string, DocumentValidationRule> BadDocuments => new()
    {
        { "orders/1", """{"total": 1""", DocumentValidationRule.BodyMalformedJson },
        { "orders/1", """[1, 2]""", DocumentValidationRule.BodyNotObject },
        { "orders/1", """{"a":1} trailing""", DocumentValidationRule.BodyMalformedJson },
        { "", """{}""", DocumentValidationRule.IdEmpty },
        { "/orders/1", """{}""", DocumentValidationRule.IdEmptyCollection },
        { "orders/\u0001", """{}""", DocumentValidationRule.IdControlCharacter },
        { "orders/1", "{\"big\":\"" + new string('x', 2048) + "\"}", DocumentValidationRule.BodyTooLarge },
    };

    [Theory]
    [MemberData(nameof(BadDocuments))]
    public void Put_BadInput_ThrowsAndWritesNothing(string id, string json, DocumentValidationRule rule)
    {
        using var temp = new TempStore(new StoreOptions(maxDocumentBytes: 1024, syncWrites: false, blockCacheBytes: 0));
        temp.Store.Put("orders/1", """{"original":true}""");
        var before = temp.Store.ReadChanges(0).ToList();

        var error = Assert.Throws<DocumentValidationException>(() => temp.Store.Put(id, TempStore.Json(json)));

        Assert.Equal(rule, error.Rule);
        Assert.Equal(1, temp.Store.LastEtag); // no etag consumed
        Assert.Equal(before, temp.Store.ReadChanges(0).ToList()); // no change entry
        Assert.Equal("""{"original":true}""", TempStore.Text(temp.Store.Get("orders/1")!.Value.Body)); // no document replaced
        Assert.Single(temp.Store.ScanMetadata("orders"));
        Assert.Equal(2, temp.Store.Put("orders/2", """{}""")); // the next write gets the next etag
    }

    [Fact]
    public void Put_Oversized_MessageNamesIdSizeAndSetting()
    {
        using var temp = new TempStore(new StoreOptions(maxDocumentBytes: 1024, syncWrites: false, blockCacheBytes: 0));

        var error = Assert.Throws<DocumentValidationException>(() => temp.Store.Put("orders/17", TempStore.Json("{\"x\":\"" + new string('y', 5000) + "\"}")));

        Assert.Contains("'orders/17'", error.Message, StringComparison.Ordinal);
        Assert.Contains("Storage:MaxDocumentBytes", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, temp.Store.LastEtag);
    }

    [Fact]
    public void PutMany_AssignsContiguousEtags_AndDeduplicatesChangesWithinAChunk()
    {
        using var temp = new TempStore();
        var writes = Enumerable.Range(0, 5000)
            .Select(i => new DocumentWrite($"items/{i % 4000:D5}", TempStore.Json($$"""{"n":{{i}}}""")))
            .ToList();

        var result = temp.Store.PutMany(writes);

        Assert.Equal(5000, result.Documents);
        Assert.Equal(1, result.FirstEtag);
        Assert.Equal(5000, result.LastEtag);
        Assert.Equal(writes.Sum(w => (long)w.Body.Length), result.Bytes);
        var changes = temp.Store.ReadChanges(0).ToList();
        Assert.Equal(4000, changes.Count);
        Assert.Equal(4000, changes.Select(c => c.Id).Distinct().Count());
        Assert.Equal("""{"n":4999}""", TempStore.Text(temp.Store.Get("items/00999")!.Value.Body));
        Assert.Equal(4000, temp.Store.ScanMetadata("items").Count());
    }

    [Fact]
    public void PutMany_InvalidDocument_KeepsEarlierChunksAndWritesNoneOfItsChunk()
    {
        using var temp = new TempStore();
        var good = Enumerable.Range(0, DocumentStore.BulkChunkDocuments + 10)
            .Select(i => new DocumentWrite($"items/{i:D6}", TempStore.Json("{}")));
        var writes = good.Append(new DocumentWrite("items/bad", TempStore.Json("{oops"))).ToList();

        var error = Assert.Throws<DocumentValidationException>(() => temp.Store.PutMany(writes));

        Assert.Equal("items/bad", error.DocumentId);
        Assert.Equal(DocumentStore.BulkChunkDocuments, temp.Store.LastEtag);
        Assert.Equal(DocumentStore.BulkChunkDocuments, temp.Store.ScanMetadata("items").Count());
        Assert.Equal(DocumentStore.BulkChunkDocuments, temp.Store.ReadChanges(0).Count());
    }

    [Fact]
    public void ConcurrentPuts_GetUniqueEtags()
    {
        using var temp = new TempStore();
        var etags = new System.Collections.Concurrent.ConcurrentBag<long>();

        Parallel.For(0, 400, new ParallelOptions { MaxDegreeOfParallelism = 4 }, i => etags.Add(temp.Store.Put($"c/{i}", "{}")));

        Assert.Equal(400, etags.Distinct().Count());
        Assert.Equal(400, etags.Max());
        Assert.Equal(400, temp.Store.ReadChanges(0).Count());
    }

    [Fact]
    public void Open_WhileOpenElsewhere_ThrowsNamingThePath()
    {
        using var temp = new TempStore();

        var error = Assert.Throws<DocumentStoreException>(() => DocumentStore.Open(temp.Directory, temp.Options));

        Assert.Contains(temp.Directory, error.Message, StringComparison.Ordinal);
        Assert.Contains("Another process (or another DocumentStore in this one) has it open", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void OpenFailures_AndClosedStores_LeaveNothingForFinalizersToCrashOn()
    {
        // RocksDB owns native options objects once they are handed over; a managed finalizer
        // freeing them again crashed the process after a failed open.
        using var temp = new TempStore();
        var file = System.IO.Path.Combine(temp.Directory, "not-a-directory");
        File.WriteAllText(file, "x");
        for (var i = 0; i < 3; i++)
        {
            Assert.ThrowsAny<Exception>(() => DocumentStore.Open(file, temp.Options));
            temp.Reopen();
        }

        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();

        Assert.Equal(1, temp.Store.Put("c/1", "{}"));
    }
}
