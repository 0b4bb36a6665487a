using Indexing.Storage;

namespace Indexing.Storage.Tests.Store;

/// <summary>
/// The native library choice in this test process (started without jemalloc preloaded): glibc's build
/// is the one RocksDB calls go to, and jemalloc is refused with the reason and the remedy before
/// anything is created. The jemalloc build itself is proved in child processes started with
/// LD_PRELOAD (Server.Tests: NativeLibraryProcessTests).
/// </summary>
public sealed class RocksDbNativeTests
{
    [Fact]
    public void Default_AfterAStoreOpened_CallsGoToTheGlibcBuildAndOnlyItIsMapped()
    {
        using var temp = new TempStore();

        Assert.Equal(RocksDbLibrary.Glibc, RocksDbNative.Selected);
        Assert.Equal("librocksdb.so", Path.GetFileName(RocksDbNative.LoadedLibraryPath));
        Assert.Equal(RocksDbNative.LoadedLibraryPath, RocksDbNative.ServingFile());
        var mapped = RocksDbNative.MappedFiles().Where(f => Path.GetFileName(f).StartsWith("librocksdb", StringComparison.Ordinal)).ToList();
        Assert.Equal([RocksDbNative.LoadedLibraryPath!], mapped);
        Assert.False(RocksDbNative.JemallocIsProcessMalloc());
        Assert.StartsWith("glibc malloc, ", RocksDbNative.DescribeMalloc(), StringComparison.Ordinal);
    }

    [Fact]
    public void Jemalloc_WithoutPreload_RefusedNamingTheSettingAndLdPreloadAndNothingCreated()
    {
        var directory = Path.Combine(Path.GetTempPath(), "indexing-store-tests", Guid.NewGuid().ToString("N"));

        var error = Assert.Throws<DocumentStoreException>(() => DocumentStore.Open(directory, new StoreOptions(nativeLibrary: "jemalloc")));

        // Either reason names the setting: jemalloc is not preloaded here, or (had another test opened a
        // store first) this process already runs the glibc build.
        Assert.Contains("Storage:NativeLibrary is jemalloc", error.Message, StringComparison.Ordinal);
        Assert.True(error.Message.Contains("LD_PRELOAD=libjemalloc.so.2", StringComparison.Ordinal) || error.Message.Contains("already runs RocksDB", StringComparison.Ordinal), error.Message);
        Assert.False(Directory.Exists(directory));
    }

    [Fact]
    public void LimitGlibcArenas_FirstCallDecides_AndTheMallocDescriptionSaysSo()
    {
        // This test process has glibc's malloc and no MALLOC_ARENA_MAX (CI's); nothing else here limits arenas.
        var environment = Environment.GetEnvironmentVariable("MALLOC_ARENA_MAX");

        var limited = RocksDbNative.LimitGlibcArenas(3);

        Assert.Equal(string.IsNullOrEmpty(environment), limited);
        Assert.Equal(
            limited ? "glibc malloc, arenas limited to 3 at start (MALLOC_ARENA_MAX unset)" : $"glibc malloc, MALLOC_ARENA_MAX={environment}",
            RocksDbNative.DescribeMalloc());
        Assert.False(RocksDbNative.LimitGlibcArenas(5));
        Assert.Equal(limited, RocksDbNative.LimitGlibcArenas(3));
        Assert.Throws<ArgumentOutOfRangeException>(() => RocksDbNative.LimitGlibcArenas(0));
    }

    [Theory]
    [InlineData("glibc", nameof(RocksDbLibrary.Glibc))]
    [InlineData(" JEMALLOC ", nameof(RocksDbLibrary.Jemalloc))]
    public void TryParse_KnownNames_AnyCase(string text, string expected)
    {
        Assert.True(RocksDbNative.TryParse(text, out var library));
        Assert.Equal(Enum.Parse<RocksDbLibrary>(expected), library);
    }

    [Theory]
    [InlineData("musl")]
    [InlineData("")]
    [InlineData(null)]
    public void TryParse_Other_False(string? text) => Assert.False(RocksDbNative.TryParse(text, out _));
}
