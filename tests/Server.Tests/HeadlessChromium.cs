using System.Diagnostics;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Indexing.Server.Tests;

/// <summary>
/// Debian's headless Chromium driven over the Chrome DevTools protocol (a WebSocket and JSON; no
/// extra packages): open a page, evaluate JavaScript in it, take a screenshot. One command at a
/// time; protocol events are read and ignored. Disposing closes the socket and kills the browser.
/// </summary>
internal sealed class HeadlessChromium : IAsyncDisposable
{
    private readonly Process _browser;
    private readonly string _profile;
    private readonly ClientWebSocket _socket = new();
    private int _nextId;

    private HeadlessChromium(Process browser, string profile)
    {
        _browser = browser;
        _profile = profile;
    }

    /// <summary>Starts Chromium with a fresh profile and connects to its first page.</summary>
    public static async Task<HeadlessChromium> StartAsync(int width, int height, CancellationToken cancellationToken)
    {
        var profile = Path.Combine(Path.GetTempPath(), "indexing-chromium", Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(profile);
        var start = new ProcessStartInfo("chromium")
        {
            UseShellExecute = false,
            RedirectStandardError = true,
            RedirectStandardOutput = true,
        };
        foreach (var argument in new[]
        {
            "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions", "--hide-scrollbars",
            "--remote-debugging-port=0", $"--user-data-dir={profile}", $"--window-size={width},{height}", "about:blank",
        })
        {
            start.ArgumentList.Add(argument);
        }

        Process browser;
        try
        {
            browser = Process.Start(start)!;
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            throw new InvalidOperationException("chromium is not installed; install it with `apt-get install -y chromium` (CI: .ci/run does).", e);
        }

        // Drain the browser's chatter so its pipes never fill and block it.
        browser.OutputDataReceived += (_, _) => { };
        browser.ErrorDataReceived += (_, _) => { };
        browser.BeginOutputReadLine();
        browser.BeginErrorReadLine();
        var chromium = new HeadlessChromium(browser, profile);
        try
        {
            // With port 0 Chromium picks a free port and writes it into the profile.
            var portFile = Path.Combine(profile, "DevToolsActivePort");
            while (!File.Exists(portFile) || File.ReadAllLines(portFile).Length < 2)
            {
                Assert.False(browser.HasExited, $"chromium exited with code {(browser.HasExited ? browser.ExitCode : 0)} before it listened");
                await Task.Delay(50, cancellationToken);
            }

            var port = File.ReadAllLines(portFile)[0].Trim();
            using var http = new HttpClient();
            var targets = JsonNode.Parse(await http.GetStringAsync($"http://127.0.0.1:{port}/json/list", cancellationToken))!.AsArray();
            var page = targets.First(t => (string?)t!["type"] == "page")!;
            await chromium._socket.ConnectAsync(new Uri((string)page["webSocketDebuggerUrl"]!), cancellationToken);
            return chromium;
        }
        catch
        {
            await chromium.DisposeAsync();
            throw;
        }
    }

    /// <summary>Sends one protocol command and returns its result, failing on a protocol error.</summary>
    public async Task<JsonNode> SendAsync(string method, JsonObject? parameters, CancellationToken cancellationToken)
    {
        var id = ++_nextId;
        var command = new JsonObject { ["id"] = id, ["method"] = method, ["params"] = parameters ?? [] };
        await _socket.SendAsync(Encoding.UTF8.GetBytes(command.ToJsonString()), WebSocketMessageType.Text, endOfMessage: true, cancellationToken);
        while (true)
        {
            var message = JsonNode.Parse(await ReceiveAsync(cancellationToken))!;
            if ((int?)message["id"] != id)
            {
                continue;
            }

            Assert.True(message["error"] is null, $"{method} failed: {message["error"]?.ToJsonString()}");
            return message["result"]!;
        }
    }

    /// <summary>Evaluates <paramref name="expression"/> in the page and returns its value as JSON.</summary>
    public async Task<JsonNode?> EvaluateAsync(string expression, CancellationToken cancellationToken)
    {
        var result = await SendAsync("Runtime.evaluate", new JsonObject { ["expression"] = expression, ["returnByValue"] = true, ["awaitPromise"] = true }, cancellationToken);
        Assert.True(result["exceptionDetails"] is null, $"page script threw: {result["exceptionDetails"]?.ToJsonString()}");
        return result["result"]!["value"];
    }

    /// <summary>A PNG of the whole page (beyond the viewport when the page is taller).</summary>
    public async Task<byte[]> ScreenshotAsync(CancellationToken cancellationToken)
    {
        var metrics = await SendAsync("Page.getLayoutMetrics", null, cancellationToken);
        var size = metrics["cssContentSize"]!;
        var clip = new JsonObject { ["x"] = 0, ["y"] = 0, ["width"] = (double)size["width"]!, ["height"] = (double)size["height"]!, ["scale"] = 1 };
        var shot = await SendAsync("Page.captureScreenshot", new JsonObject { ["format"] = "png", ["captureBeyondViewport"] = true, ["clip"] = clip }, cancellationToken);
        return Convert.FromBase64String((string)shot["data"]!);
    }

    public async ValueTask DisposeAsync()
    {
        if (_socket.State == WebSocketState.Open)
        {
            try
            {
                await _socket.CloseAsync(WebSocketCloseStatus.NormalClosure, null, CancellationToken.None);
            }
            catch (WebSocketException)
            {
                // The browser may close first; it is killed next anyway.
            }
        }

        _socket.Dispose();
        if (!_browser.HasExited)
        {
            _browser.Kill(entireProcessTree: true);
            await _browser.WaitForExitAsync();
        }

        _browser.Dispose();
        try
        {
            Directory.Delete(_profile, recursive: true);
        }
        catch (IOException)
        {
            // Chromium may still be releasing files in its profile; a leftover temp directory is harmless.
        }
    }

    private async Task<string> ReceiveAsync(CancellationToken cancellationToken)
    {
        var buffer = new byte[64 * 1024];
        using var message = new MemoryStream();
        WebSocketReceiveResult result;
        do
        {
            result = await _socket.ReceiveAsync(buffer, cancellationToken);
            Assert.NotEqual(WebSocketMessageType.Close, result.MessageType);
            message.Write(buffer, 0, result.Count);
        }
        while (!result.EndOfMessage);

        return Encoding.UTF8.GetString(message.GetBuffer(), 0, (int)message.Length);
    }
}
