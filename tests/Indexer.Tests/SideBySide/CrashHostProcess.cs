using System.Diagnostics;

namespace Indexing.Indexer.Tests.SideBySide;

// The crash host (tests/Indexer.CrashHost) as a child process: run with some arguments, killed with
// SIGKILL (no finally blocks, no flushes) as soon as it prints a given line.
internal static class CrashHostProcess
{
    /// <summary>Runs the host, kills it when it prints <paramref name="killAt"/>, and returns every line it wrote before it died.</summary>
    public static async Task<List<string>> RunUntilKilledAsync(IEnumerable<string> arguments, string killAt)
    {
        // Copied beside the tests by their project reference to it.
        var host = Path.Combine(AppContext.BaseDirectory, "Indexing.Indexer.CrashHost.dll");
        Assert.True(File.Exists(host), $"crash host not built at {host}");
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(host);
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = Process.Start(start)!;
        var stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(90));
        string? line;
        var output = new List<string>();
        var killed = false;
        try
        {
            while ((line = await process.StandardOutput.ReadLineAsync(timeout.Token)) is not null)
            {
                output.Add(line);
                if (line == killAt && !killed)
                {
                    process.Kill(entireProcessTree: true);
                    killed = true;
                    // Then read on to the end: every line the process wrote before it died.
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

        await process.WaitForExitAsync(CancellationToken.None);
        Assert.True(killed, $"the crash host ended without printing {killAt}: stdout {string.Join(" | ", output.TakeLast(20))}; stderr {await stderr}");
        return output;
    }
}
