using System.Diagnostics;

namespace Indexing.Indexer.Tests.SideBySide;

// A real process runs a rebuild and is killed (SIGKILL) at each rebuild point, in every phase
// and inside the swap. After each kill, reopening must serve queries from a complete index at
// once, and the rebuild must complete (or have completed) with a consistent result.
[Trait("Category", "Crash")]
public sealed class RebuildCrashTests
{
    private const int Documents = 1200;

    public static TheoryData<string> Points() => [.. Enum.GetNames<RebuildPoint>()];

    [Theory]
    [MemberData(nameof(Points))]
    public async Task KilledAtPoint_ReopenServesACompleteIndex_AndTheRebuildCompletes(string pointName)
    {
        using var env = new ManagerEnvironment(documents: Documents);
        var manager = env.OpenManager();
        manager.CreateOrUpdate(ManagerEnvironment.V1);
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        await env.CloseManagerAsync();
        env.Store.Dispose();
        var definitionFile = Path.Combine(env.Root, "v2.json");
        await File.WriteAllTextAsync(definitionFile, ManagerEnvironment.V2Json);

        await RunHostUntilKilledAsync(env, pointName, definitionFile);

        env.ReopenStoreAfterClose();
        manager = env.OpenManager();
        // At once, before any rebuild work resumes: a complete index serves (old or new generation).
        Assert.Equal(Documents, manager.Query("orders", new IndexQuery("*:*") { Take = 1 }).TotalHits);
        if (manager.GetRebuild("orders") is not null)
        {
            var resumed = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
            Assert.Equal(RebuildPhase.Done, resumed.Phase);
        }

        var summary = manager.GetSummary("orders");
        Assert.Equal(2, summary.Generation);
        Assert.Equal(ManagerEnvironment.V2.DefinitionHash, summary.DefinitionHash);
        Assert.Equal(["g000002"], env.GenerationDirectories("orders"));
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(Documents, report.IndexDocuments);
    }

    private static async Task RunHostUntilKilledAsync(ManagerEnvironment env, string pointName, string definitionFile)
    {
        var host = typeof(RebuildPoint).Assembly.Location.Replace("Indexing.Indexer.dll", "Indexing.Indexer.CrashHost.dll", StringComparison.Ordinal);
        Assert.True(File.Exists(host), $"crash host not built at {host}");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var argument in new[] { host, env.StoreDirectory, env.IndexRoot, pointName, definitionFile })
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start)!;
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        string? line;
        var output = new List<string>();
        try
        {
            while ((line = await process.StandardOutput.ReadLineAsync(timeout.Token)) is not null)
            {
                output.Add(line);
                if (line == $"AT {pointName}")
                {
                    process.Kill(entireProcessTree: true); // SIGKILL: no finally blocks, no flushes
                    await process.WaitForExitAsync(CancellationToken.None);
                    return;
                }
            }
        }
        finally
        {
            if (!process.HasExited)
            {
                process.Kill(entireProcessTree: true);
            }
        }

        Assert.Fail($"the crash host ended without reaching {pointName}: stdout {string.Join(" | ", output)}; stderr {await stderr}");
    }
}
