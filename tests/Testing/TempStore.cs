using System.Text;
using Indexing.Storage;
using Xunit;

namespace Indexing.Testing;

/// <summary>
/// A real RocksDB document store in its own <see cref="TempDirectory"/>, deleted on dispose. By
/// default writes skip the fsync (tests do not crash the machine) and the block cache is small.
/// </summary>
public sealed class TempStore : IDisposable
{
    private readonly TempDirectory _directory;

    public TempStore(StoreOptions? options = null, string purpose = "indexing-store-tests")
    {
        _directory = new TempDirectory(purpose);
        Options = options ?? DefaultOptions;
        Store = DocumentStore.Open(Directory, Options);
    }

    /// <summary>
    /// Unsynced writes, an 8 MiB block cache and no row cache: tests of reads see the block cache
    /// (the row cache's own tests turn it on).
    /// </summary>
    public static StoreOptions DefaultOptions { get; } = new(syncWrites: false, blockCacheBytes: 8 << 20, rowCacheBytes: 0);

    public string Directory => _directory.Path;

    public StoreOptions Options { get; }

    /// <summary>The open store; a new instance after <see cref="Reopen"/>.</summary>
    internal DocumentStore Store { get; private set; }

    public static byte[] Json(string json) => Encoding.UTF8.GetBytes(json);

    public static string Text(byte[] body) => Encoding.UTF8.GetString(body);

    /// <summary>
    /// Closes the store and opens it again over the same directory; <paramref name="whileClosed"/>
    /// runs in between (e.g. to damage a file).
    /// </summary>
    public void Reopen(Action? whileClosed = null)
    {
        Store.Dispose();
        whileClosed?.Invoke();
        Store = DocumentStore.Open(Directory, Options);
    }

    /// <summary>Fails the test if a snapshot or iterator is still open.</summary>
    public void AssertNoOpenHandles()
    {
        var status = Store.GetStatus();
        Assert.True(status.OpenSnapshots == 0, $"{status.OpenSnapshots} snapshots are still open.");
        Assert.True(status.OpenIterators == 0, $"{status.OpenIterators} iterators are still open.");
    }

    public void Dispose()
    {
        Store.Dispose();
        _directory.Dispose();
    }
}
