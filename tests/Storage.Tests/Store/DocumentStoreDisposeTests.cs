using Indexing.Storage;

namespace Indexing.Storage.Tests.Store;

public sealed class DocumentStoreDisposeTests
{
    [Fact]
    public void Dispose_WhileScansAndReadsRun_EndsThemWithObjectDisposed()
    {
        using var temp = new TempStore();
        temp.Store.PutMany(Enumerable.Range(0, 3000).Select(i => new DocumentWrite($"c/{i:D5}", TempStore.Json($$"""{"n":{{i}}}"""))));
        var store = temp.Store;
        var snapshot = store.CreateSnapshot();
        using var started = new CountdownEvent(4);
        var failures = new System.Collections.Concurrent.ConcurrentBag<Exception>();

        void Loop(Action body)
        {
            var signalled = false;
            try
            {
                while (true)
                {
                    body();
                    if (!signalled)
                    {
                        signalled = true;
                        started.Signal();
                    }
                }
            }
            catch (Exception e)
            {
                if (!signalled)
                {
                    started.Signal();
                }

                failures.Add(e);
            }
        }

        var threads = new[]
        {
            new Thread(() => Loop(() => { foreach (var _ in store.ScanMetadata("c")) { } })),
            new Thread(() => Loop(() => { foreach (var _ in snapshot.ScanMetadata("c")) { } })),
            new Thread(() => Loop(() => snapshot.ReadRange("c/00000", "c/00500", []))),
            new Thread(() => Loop(() => store.Get("c/00042"))),
        };
        foreach (var thread in threads)
        {
            thread.Start();
        }

        Assert.True(started.Wait(TimeSpan.FromSeconds(30)));
        store.Dispose();
        foreach (var thread in threads)
        {
            Assert.True(thread.Join(TimeSpan.FromSeconds(30)));
        }

        Assert.Equal(4, failures.Count);
        Assert.All(failures, e => Assert.IsType<ObjectDisposedException>(e));
        snapshot.Dispose(); // after the store: a no-op, not a crash
    }

    [Fact]
    public void Dispose_WithAbandonedEnumeratorsAndSnapshots_FreesThem()
    {
        using var temp = new TempStore();
        temp.Store.Put("c/1", "{}");
        temp.Store.Put("c/2", "{}");
        var snapshot = temp.Store.CreateSnapshot();
        var abandoned = snapshot.ScanMetadata("c").GetEnumerator();
        Assert.True(abandoned.MoveNext());
        var changes = temp.Store.ReadChanges(0).GetEnumerator();
        Assert.True(changes.MoveNext());

        temp.Store.Dispose();

        Assert.Throws<ObjectDisposedException>(() => abandoned.MoveNext());
        Assert.Throws<ObjectDisposedException>(() => changes.MoveNext());
        abandoned.Dispose();
        changes.Dispose();
        Assert.Throws<ObjectDisposedException>(() => temp.Store.Get("c/1"));
        Assert.Throws<ObjectDisposedException>(() => temp.Store.Put("c/3", "{}"));
        Assert.Throws<ObjectDisposedException>(() => temp.Store.CreateSnapshot());
    }
}
