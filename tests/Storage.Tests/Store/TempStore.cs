using System.Text;
using Indexing.Storage;

namespace Indexing.Storage.Tests.Store;

/// <summary>A store in its own temp directory, deleted on dispose; fails the test if a snapshot or iterator leaked.</summary>
internal sealed class TempStore : IDisposable
{
    public TempStore(StoreOptions? options = null)
    {
        Directory = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "indexing-store-tests", Guid.NewGuid().ToString("N"));
        Options = options ?? new StoreOptions(syncWrites: false, blockCacheBytes: 8 << 20);
        Store = DocumentStore.Open(Directory, Options);
    }

    public string Directory { get; }

    public StoreOptions Options { get; }

    public DocumentStore Store { get; private set; }

    public static byte[] Json(string json) => Encoding.UTF8.GetBytes(json);

    public static string Text(byte[] body) => Encoding.UTF8.GetString(body);

    public void Reopen()
    {
        Store.Dispose();
        Store = DocumentStore.Open(Directory, Options);
    }

    public void AssertNoOpenHandles()
    {
        var status = Store.GetStatus();
        Assert.Equal(0, status.OpenSnapshots);
        Assert.Equal(0, status.OpenIterators);
    }

    public void Dispose()
    {
        Store.Dispose();
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // Best effort: a leftover temp directory must not fail the test that made it.
        }
    }
}
