using System.Diagnostics;
using System.Text;

namespace Indexing.Packaging.Tests;

/// <summary>`dotnet ARGS` as a user runs it from a shell, with its output (both streams, in order) collected.</summary>
internal static class DotnetCommand
{
    /// <summary>Runs the command to its end; kills it, and fails the test with its output, past <paramref name="timeout"/>.</summary>
    public static async Task<(int ExitCode, string Output)> RunAsync(
        string workingDirectory, TimeSpan timeout, IReadOnlyDictionary<string, string> environment, params string[] arguments)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = workingDirectory,
        };
        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        // The test host runs inside `dotnet test`, whose MSBuild variables would make a child build
        // resolve its SDK and tasks like the parent build instead of like a shell: left out.
        foreach (var name in start.Environment.Keys.Where(k => k.StartsWith("MSBUILD", StringComparison.OrdinalIgnoreCase)).ToList())
        {
            start.Environment.Remove(name);
        }

        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        start.Environment["DOTNET_SKIP_FIRST_TIME_EXPERIENCE"] = "1";
        foreach (var (name, value) in environment)
        {
            start.Environment[name] = value;
        }

        var output = new StringBuilder();
        using var process = new Process { StartInfo = start };
        process.OutputDataReceived += (_, e) => Append(output, e.Data);
        process.ErrorDataReceived += (_, e) => Append(output, e.Data);
        process.Start();
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        try
        {
            await process.WaitForExitAsync().WaitAsync(timeout);
        }
        catch (TimeoutException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
            Assert.Fail($"`dotnet {string.Join(' ', arguments)}` did not end within {timeout}:\n{Text(output)}");
        }

        // Let the asynchronous readers deliver the last lines.
        process.WaitForExit();
        return (process.ExitCode, Text(output));
    }

    private static void Append(StringBuilder output, string? line)
    {
        if (line is not null)
        {
            lock (output)
            {
                output.AppendLine(line);
            }
        }
    }

    private static string Text(StringBuilder output)
    {
        lock (output)
        {
            return output.ToString();
        }
    }
}
