using System.Diagnostics;
using Indexing.Storage;
using Indexing.Testing;

namespace Indexing.Storage.Tests;

// The store's volume fills: RocksDB refuses every write after the first that found no space, reads
// go on, and once space returns RocksDB resumes by itself (its SstFileManager checks every 5 s).
// The store must say which failure it is (StoreFullException), show it in its status, lose no
// acknowledged write and consume no etag for a refused one.
public sealed class FullVolumeTests
{
    // Small enough to fill in a few hundred writes (the write-ahead log fills it: the memtables
    // never flush at this size).
    private const long VolumeBytes = 4L << 20;

    private static readonly TimeSpan _resumeTimeout = TimeSpan.FromSeconds(60);

    private static readonly byte[] _body = TempStore.Json($$"""{"text":"{{new string('x', 16 << 10)}}"}""");

    [Fact]
    public void Put_VolumeFull_ThrowsStoreFull_ReadsGoOn_AndWritesResumeOnceSpaceReturns()
    {
        using var volume = new TmpfsVolume("indexing-store-full", VolumeBytes);
        var store = DocumentStore.Open(volume.Combine("store"), TempStore.DefaultOptions);
        try
        {
            var (acknowledged, full) = FillUntilFull(store);
            Assert.Equal(store.Path, full.StoreDirectory);
            Assert.Equal(DocumentStore.ResumeFreeBytes, full.ResumeFreeBytes);
            Assert.NotNull(full.AvailableBytes);
            Assert.Contains("the store's volume is full", full.Message, StringComparison.Ordinal);
            Assert.Contains(MessageText.QuotePath(store.Path), full.Message, StringComparison.Ordinal);
            Assert.Contains("64 MiB free again", full.Message, StringComparison.Ordinal);
            Assert.Contains("No space left on device", full.Message, StringComparison.Ordinal);
            Assert.Contains("nothing was written", full.Message, StringComparison.Ordinal);

            // Every write is refused now, however small, until RocksDB resumes.
            Assert.Throws<StoreFullException>(() => store.Put("small", "{}"));
            Assert.Throws<StoreFullException>(() => store.Delete("d/0000"));
            var bulk = Assert.Throws<StoreFullException>(() => store.PutMany([new DocumentWrite("bulk/1", TempStore.Json("{}"))]));
            Assert.Contains("the documents before it are stored", bulk.Message, StringComparison.Ordinal);
            var refused = store.GetWriteStatus();
            Assert.False(refused.Accepting);
            Assert.True(refused.VolumeFull);
            Assert.NotNull(refused.RefusedSince);
            Assert.Contains("No space left on device", refused.Error, StringComparison.Ordinal);

            // Reads go on: documents, the change feed, a snapshot's scan. No refused write took an etag.
            AssertAllPresent(store, acknowledged, _body);
            Assert.Equal(acknowledged.Count, store.LastEtag);
            Assert.Equal(acknowledged.Values.Order(), store.ReadChanges(0).Select(change => change.Etag));
            using (var snapshot = store.CreateSnapshot())
            {
                Assert.Equal(acknowledged.Count, snapshot.ScanMetadata("d").Count());
            }

            // Space returns: RocksDB waits for its reserve (the largest memtable) and resumes by itself.
            volume.Resize(VolumeBytes + DocumentStore.ResumeFreeBytes + (16L << 20));
            var before = acknowledged.Count;
            acknowledged["after/1"] = PutOnceResumed(store, "after/1", _body);
            Assert.Equal(before + 1, acknowledged["after/1"]);
            var accepting = store.GetWriteStatus();
            Assert.True(accepting.Accepting);
            Assert.False(accepting.VolumeFull);
            Assert.Null(accepting.RefusedSince);
            Assert.Null(accepting.Error);
            acknowledged["after/2"] = store.Put("after/2", _body);
            Assert.Equal(before + 2, acknowledged["after/2"]);
            Assert.Equal(before + 3, store.Delete("d/0000"));
            acknowledged.Remove("d/0000");

            // Every acknowledged write survives a close and reopen.
            store.Dispose();
            store = DocumentStore.Open(volume.Combine("store"), TempStore.DefaultOptions);
            Assert.Equal(before + 3, store.LastEtag);
            Assert.Null(store.Get("d/0000"));
            AssertAllPresent(store, acknowledged, _body);
            Assert.True(store.GetStatus().WritesAccepted);
        }
        finally
        {
            store.Dispose();
        }
    }

    [Fact]
    public void Put_VolumeFull_ClosedBeforeSpaceReturns_KeepsEveryAcknowledgedWrite()
    {
        using var volume = new TmpfsVolume("indexing-store-full", VolumeBytes);
        var path = volume.Combine("store");
        var store = DocumentStore.Open(path, TempStore.DefaultOptions);
        Dictionary<string, long> acknowledged;
        try
        {
            (acknowledged, _) = FillUntilFull(store);
        }
        finally
        {
            // Closed with RocksDB's error set and the refused write's bytes at the log's tail.
            store.Dispose();
        }

        volume.Resize(VolumeBytes + (16L << 20));
        using var reopened = DocumentStore.Open(path, TempStore.DefaultOptions);
        Assert.Equal(acknowledged.Count, reopened.LastEtag);
        AssertAllPresent(reopened, acknowledged, _body);
        Assert.Equal(acknowledged.Count + 1, reopened.Put("after", _body));
    }

    [Fact]
    public void Open_VolumeFull_SaysTheVolumeIsFull_AndOpensOnceSpaceReturns()
    {
        using var volume = new TmpfsVolume("indexing-store-full", VolumeBytes);
        var path = volume.Combine("store");
        using (var store = DocumentStore.Open(path, TempStore.DefaultOptions))
        {
            store.Put("d/1", "{}");
        }

        // A filler file takes the rest of the volume.
        var filler = volume.Combine("filler");
        using (var stream = File.Create(filler))
        {
            var block = new byte[64 << 10];
            try
            {
                while (true)
                {
                    stream.Write(block);
                    stream.Flush();
                }
            }
            catch (IOException)
            {
                // Full.
            }
        }

        var error = Assert.Throws<DocumentStoreException>(() => DocumentStore.Open(path, TempStore.DefaultOptions));
        Assert.Contains("No space left on device", error.Message, StringComparison.Ordinal);
        Assert.Contains("The store's volume is full", error.Message, StringComparison.Ordinal);

        File.Delete(filler);
        using var reopened = DocumentStore.Open(path, TempStore.DefaultOptions);
        Assert.NotNull(reopened.Get("d/1"));
        Assert.Equal(2, reopened.Put("d/2", "{}"));
    }

    // The status probes writes with an empty batch. One without the log would leave RocksDB thinking
    // unlogged data sits in the memtables, and every close would flush them all (slow shutdowns).
    [Fact]
    public void GetStatus_ProbesWrites_WithoutMakingCloseFlushTheMemtables()
    {
        using var directory = new TempDirectory("indexing-store-tests");
        using (var store = DocumentStore.Open(directory.Path, TempStore.DefaultOptions))
        {
            store.Put("d/1", "{}");
            Assert.True(store.GetStatus().WritesAccepted);
            Assert.Equal(2, store.Put("d/2", "{}"));
        }

        Assert.Empty(Directory.GetFiles(directory.Path, "*.sst"));
        using var reopened = DocumentStore.Open(directory.Path, TempStore.DefaultOptions);
        Assert.Equal(2, reopened.LastEtag);
    }

    // Puts 16 KiB documents until the volume refuses one; returns the acknowledged ids with their etags and the refusal.
    private static (Dictionary<string, long> Acknowledged, StoreFullException Full) FillUntilFull(DocumentStore store)
    {
        var acknowledged = new Dictionary<string, long>();
        for (var i = 0; i < 1000; i++)
        {
            var id = $"d/{i:D4}";
            try
            {
                acknowledged[id] = store.Put(id, _body);
            }
            catch (StoreFullException e)
            {
                Assert.True(acknowledged.Count > 10, $"only {acknowledged.Count} writes before the volume was full.");
                return (acknowledged, e);
            }
        }

        Assert.Fail($"{acknowledged.Count} writes of 16 KiB never filled a 4 MiB volume.");
        return default;
    }

    private static void AssertAllPresent(DocumentStore store, Dictionary<string, long> acknowledged, byte[] body)
    {
        foreach (var (id, etag) in acknowledged)
        {
            var document = store.Get(id);
            Assert.True(document is not null, $"acknowledged write of {id} (etag {etag}) is missing.");
            Assert.Equal(body, document.Value.Body);
        }
    }

    // Retries the put until RocksDB has resumed, for at most _resumeTimeout.
    private static long PutOnceResumed(DocumentStore store, string id, byte[] body)
    {
        var waited = Stopwatch.StartNew();
        while (true)
        {
            try
            {
                return store.Put(id, body);
            }
            catch (StoreFullException e) when (waited.Elapsed < _resumeTimeout)
            {
                Assert.True(e.AvailableBytes >= DocumentStore.ResumeFreeBytes, $"the volume has only {e.AvailableBytes} bytes free after it grew.");
                Thread.Sleep(100);
            }
        }
    }
}
