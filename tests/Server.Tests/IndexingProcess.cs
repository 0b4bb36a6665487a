using System.Diagnostics;
using System.Text;

namespace Indexing.Server.Tests;

/// <summary>`dotnet indexing.dll &lt;command&gt; --data DIR ...` as a user runs it, with its output collected; killed on dispose if still running.</summary>
internal sealed class IndexingProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();
    private readonly TaskCompletionSource<Uri> _address = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private IndexingProcess(Process process)
    {
        _process = process;
    }

    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    public static IndexingProcess Start(string command, string data, params string[] arguments) =>
        Start(command, data, new Dictionary<string, string>(), arguments);

    /// <summary>Starts the process with <paramref name="environment"/> added to its environment (LD_PRELOAD, say); no --data when <paramref name="data"/> is null (a command without one).</summary>
    public static IndexingProcess Start(string command, string? data, IReadOnlyDictionary<string, string> environment, params string[] arguments)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = AppContext.BaseDirectory,
        };
        start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "indexing.dll"));
        start.ArgumentList.Add(command);
        if (data is not null)
        {
            start.ArgumentList.Add("--data");
            start.ArgumentList.Add(data);
        }

        foreach (var argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        start.Environment["Storage__SyncWrites"] = "false";
        start.Environment["Logging__LogLevel__Default"] = "Warning";
        foreach (var (name, value) in environment)
        {
            start.Environment[name] = value;
        }

        var started = new IndexingProcess(new Process { StartInfo = start });
        started._process.OutputDataReceived += (_, e) => started.Line(e.Data);
        started._process.ErrorDataReceived += (_, e) => started.Line(e.Data);
        started._process.Start();
        started._process.BeginOutputReadLine();
        started._process.BeginErrorReadLine();
        return started;
    }

    public async Task<Uri> WaitForAddressAsync(TimeSpan timeout)
    {
        var exited = _process.WaitForExitAsync();
        var first = await Task.WhenAny(_address.Task, exited).WaitAsync(timeout);
        Assert.True(first == _address.Task, $"exited before listening:\n{Output}");
        return await _address.Task;
    }

    /// <summary>SIGKILL: the process ends at once, with no shutdown of any kind.</summary>
    public void Kill()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit();
    }

    /// <summary>SIGTERM, as a service manager or `docker stop` sends it (Process.Kill would be SIGKILL).</summary>
    public void Terminate() => Signal("TERM");

    /// <summary>SIGINT, as Ctrl+C in a terminal sends it to the foreground process.</summary>
    public void Interrupt()
    {
        // A child inherits an ignored SIGINT (a background job of a non-interactive shell, or nohup's
        // children, start that way) and rightly keeps ignoring it: say so instead of timing out.
        Assert.False(
            SignalIgnored(2),
            "SIGINT is ignored by the test process, so the child ignores it too; run `dotnet test` in the foreground, " +
            "or with SIGINT restored (a background job of a non-interactive shell starts with SIGINT ignored)");
        Signal("INT");
    }

    // The SigIgn mask of /proc/self/status: bit (signal - 1) set when the signal is ignored.
    private static bool SignalIgnored(int signal)
    {
        var line = File.ReadLines("/proc/self/status").FirstOrDefault(l => l.StartsWith("SigIgn:", StringComparison.Ordinal));
        return line is not null
            && ulong.TryParse(line["SigIgn:".Length..].Trim(), System.Globalization.NumberStyles.HexNumber, System.Globalization.CultureInfo.InvariantCulture, out var mask)
            && (mask & (1UL << (signal - 1))) != 0;
    }

    /// <summary>Waits until the output holds <paramref name="text"/>; fails if the process exits first.</summary>
    public async Task WaitForOutputAsync(string text, TimeSpan timeout)
    {
        var clock = Stopwatch.StartNew();
        while (!Output.Contains(text, StringComparison.Ordinal))
        {
            if (_process.HasExited)
            {
                // Let the output readers deliver the last lines before judging.
                _process.WaitForExit();
                Assert.True(Output.Contains(text, StringComparison.Ordinal), $"exited before printing '{text}':\n{Output}");
                return;
            }

            Assert.True(clock.Elapsed < timeout, $"'{text}' not printed within {timeout}:\n{Output}");
            await Task.Delay(50);
        }
    }

    public bool HasExited => _process.HasExited;

    /// <summary>The files mapped into the running process (/proc/PID/maps), each once.</summary>
    public IReadOnlyList<string> MappedFiles() =>
        [.. File.ReadLines($"/proc/{_process.Id}/maps").Select(l => l.IndexOf('/', StringComparison.Ordinal) is var i and >= 0 ? l[i..] : null).OfType<string>().Distinct()];

    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        await _process.WaitForExitAsync().WaitAsync(timeout);
        // Let the asynchronous output readers drain the last lines.
        _process.WaitForExit();
        return _process.ExitCode;
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }

        _process.Dispose();
    }

    private void Signal(string name)
    {
        using var kill = Process.Start("kill", ["-" + name, _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
        Assert.Equal(0, kill.ExitCode);
    }

    private void Line(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_output)
        {
            _output.AppendLine(line);
        }

        const string Marker = "serving ";
        if (line.StartsWith(Marker, StringComparison.Ordinal))
        {
            _address.TrySetResult(new Uri(line[Marker.Length..].Split(' ')[0]));
        }
    }
}
