using System.Net;
using System.Net.Http.Json;
using System.Text.Json;

namespace Indexing.Server.Tests;

/// <summary>
/// Storage:NativeLibrary in real processes, as the scale run starts them (lab/tools/scale-run.sh): the
/// RocksDB build chosen is the one mapped and the one RocksDB calls go to (dladdr, reported by
/// /admin/memory), jemalloc is the process's malloc when preloaded, and jemalloc without the preload
/// is refused at start with the remedy. Needs Debian's libjemalloc2 (CI installs it).
/// </summary>
public sealed class NativeLibraryProcessTests : IDisposable
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(60);
    private static readonly Dictionary<string, string> _preloadJemalloc = new() { ["LD_PRELOAD"] = "libjemalloc.so.2" };
    private readonly TempDirectory _directory = new("indexing-native-tests");

    [Fact]
    public async Task Jemalloc_Preloaded_TheJemallocBuildServesAndJemallocIsMalloc()
    {
        using var server = IndexingProcess.Start("serve", _directory.Path, _preloadJemalloc, "--port", "0", "--Storage:NativeLibrary=jemalloc");
        var (memory, mapped) = await ServeOneDocumentAsync(server);

        Assert.Equal("librocksdb-jemalloc.so", Path.GetFileName(memory.GetProperty("rocksDbLibrary").GetString()));
        Assert.StartsWith("jemalloc (", memory.GetProperty("malloc").GetString(), StringComparison.Ordinal);
        Assert.Contains(mapped, f => Path.GetFileName(f) == "librocksdb-jemalloc.so");
        Assert.DoesNotContain(mapped, f => Path.GetFileName(f) == "librocksdb.so");
        Assert.Contains(mapped, f => Path.GetFileName(f).StartsWith("libjemalloc.so", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Glibc_WithJemallocPreloaded_CallsGoToTheGlibcBuildThatThePackageWouldNotHavePicked()
    {
        // With jemalloc preloaded the package's own loader picks the jemalloc build; the setting overrides it.
        using var server = IndexingProcess.Start("serve", _directory.Path, _preloadJemalloc, "--port", "0", "--Storage:NativeLibrary=glibc");
        var (memory, mapped) = await ServeOneDocumentAsync(server);

        Assert.Equal("librocksdb.so", Path.GetFileName(memory.GetProperty("rocksDbLibrary").GetString()));
        Assert.Contains(mapped, f => Path.GetFileName(f) == "librocksdb.so");
    }

    [Fact]
    public async Task Glibc_ServeStarts_WithOneMallocArenaPerCore_UnlessTheEnvironmentSetsIt()
    {
        using (var server = IndexingProcess.Start("serve", _directory.Path, "--port", "0"))
        {
            var (memory, _) = await ServeOneDocumentAsync(server);
            Assert.Equal($"glibc malloc, arenas limited to {Environment.ProcessorCount} at start (MALLOC_ARENA_MAX unset)", memory.GetProperty("malloc").GetString());
        }

        using (var server = IndexingProcess.Start("serve", Path.Combine(_directory.Path, "environment"), new Dictionary<string, string> { ["MALLOC_ARENA_MAX"] = "5" }, "--port", "0"))
        {
            var (memory, _) = await ServeOneDocumentAsync(server);
            Assert.Equal("glibc malloc, MALLOC_ARENA_MAX=5", memory.GetProperty("malloc").GetString());
        }
    }

    [Fact]
    public async Task Jemalloc_NotPreloaded_ServeExits2NamingTheSettingAndLdPreload()
    {
        using var server = IndexingProcess.Start("serve", _directory.Path, "--port", "0", "--Storage:NativeLibrary=jemalloc");

        Assert.Equal(2, await server.WaitForExitAsync(_hangGuard));
        Assert.Contains("Storage:NativeLibrary is jemalloc, but jemalloc is not this process's malloc", server.Output, StringComparison.Ordinal);
        Assert.Contains("LD_PRELOAD=libjemalloc.so.2", server.Output, StringComparison.Ordinal);
        Assert.False(Directory.Exists(Path.Combine(_directory.Path, "store")), server.Output);
    }

    [Fact]
    public async Task UnknownLibrary_ServeExits2ListingTheChoices()
    {
        using var server = IndexingProcess.Start("serve", _directory.Path, "--port", "0", "--Storage:NativeLibrary=tcmalloc");

        Assert.Equal(2, await server.WaitForExitAsync(_hangGuard));
        Assert.Contains("Storage:NativeLibrary is 'tcmalloc'; it must be glibc (librocksdb.so, the default) or jemalloc", server.Output, StringComparison.Ordinal);
    }

    public void Dispose() => _directory.Dispose();

    // A put and a get through the chosen library, then what /admin/memory says and what is mapped.
    private static async Task<(JsonElement Memory, IReadOnlyList<string> Mapped)> ServeOneDocumentAsync(IndexingProcess server)
    {
        var address = await server.WaitForAddressAsync(_hangGuard);
        using var client = new HttpClient { BaseAddress = address, Timeout = _hangGuard };
        using (var put = await client.PutAsync("/docs/orders/1", RunningServer.Json("""{"n": 1}""")))
        {
            Assert.Equal(HttpStatusCode.Created, put.StatusCode);
        }

        Assert.Equal("""{"n": 1}""", await client.GetStringAsync("/docs/orders/1"));
        var memory = await client.GetFromJsonAsync<JsonElement>("/admin/memory");
        var mapped = server.MappedFiles();
        server.Terminate();
        Assert.Equal(0, await server.WaitForExitAsync(_hangGuard));
        return (memory, mapped);
    }
}
