using Indexing.Storage;

namespace Indexing.Server.Tests;

/// <summary>
/// The main job as a user stops it, with Ctrl+C (SIGINT) to the built executable: while it works,
/// the run is cancelled; once it serves, it is a normal stop. Either way the store is closed, which
/// RocksDB's own log records.
/// </summary>
public sealed class DemoProcessTests : IDisposable
{
    private static readonly TimeSpan _hangGuard = TimeSpan.FromMinutes(3);
    private readonly TempDirectory _directory = new("indexing-demo-process-tests");

    [Fact]
    public async Task Demo_CtrlCWhileItWorks_CancelsTheRunWith130AndClosesTheStore()
    {
        using var demo = IndexingProcess.Start("demo", _directory.Path, "--size", "32MiB", "--port", "0");
        // After the prefetch pass come the index's first build and 5 s of idle latency measurement,
        // so a Ctrl+C sent when the pass starts lands while the demo is still working.
        await demo.WaitForOutputAsync("Prefetching collection", _hangGuard);

        demo.Interrupt();
        var exitCode = await demo.WaitForExitAsync(_hangGuard);

        Assert.True(exitCode == 130, $"exit code {exitCode}; output:\n{demo.Output}");
        Assert.True(demo.Output.Contains("cancelled", StringComparison.Ordinal), demo.Output);
        Assert.DoesNotContain("Still serving", demo.Output, StringComparison.Ordinal);
        AssertStoreClosed();
        using var store = DocumentStore.Open(Path.Combine(_directory.Path, "store"));
        Assert.NotEmpty(store.ScanMetadata().Take(1));
    }

    [Fact]
    public async Task Demo_CtrlCWhileServing_StopsWithTheRunsExitCodeAndClosesTheStore()
    {
        using var demo = IndexingProcess.Start("demo", _directory.Path, "--size", "8MiB", "--no-rebuild", "--port", "0");
        await demo.WaitForOutputAsync("Still serving", _hangGuard);

        demo.Interrupt();
        var exitCode = await demo.WaitForExitAsync(_hangGuard);

        Assert.True(exitCode == 0, $"exit code {exitCode}; output:\n{demo.Output}");
        Assert.DoesNotContain("cancelled", demo.Output, StringComparison.Ordinal);
        AssertStoreClosed();
    }

    public void Dispose() => _directory.Dispose();

    // RocksDB writes this to its info log when the database is closed, not when the process dies. The
    // log rotates only when a store opens, and each test has its own directory, read before reopening.
    private void AssertStoreClosed() =>
        Assert.Contains("Shutdown complete", File.ReadAllText(Path.Combine(_directory.Path, "store", "LOG")), StringComparison.Ordinal);
}
