#:property TreatWarningsAsErrors=false
#:property PublishAot=false

// What slow readers of large documents cost the server: starts a built server (its indexing.dll) on
// a fresh data directory on 127.0.0.1, PUTs a few large documents, opens N connections that each GET
// one and then read a few bytes a second, and samples the server's VmRSS and RssAnon
// (/proc/PID/status) every second. All traffic is loopback; the run is bounded in connections and time.
//
//   dotnet build src/Server -c Release
//   dotnet run lab/tools/slow-readers.cs -- src/Server/bin/Release/net10.0/indexing.dll [readers 200] [seconds 60] [document MiB 8] [documents 4] [port 5391]
//
// Prints the peak and the last sample (MiB) and how many readers were cut off; run it 3 times per
// build and quote medians with `uptime`'s load average (benchmarks/results/slow-readers-and-verify.md).
using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

var serverDll = Path.GetFullPath(args.Length > 0 ? args[0] : "src/Server/bin/Release/net10.0/indexing.dll");
var readers = args.Length > 1 ? int.Parse(args[1]) : 200;
var seconds = args.Length > 2 ? int.Parse(args[2]) : 60;
var documentMiB = args.Length > 3 ? int.Parse(args[3]) : 8;
var documents = args.Length > 4 ? int.Parse(args[4]) : 4;
var port = args.Length > 5 ? int.Parse(args[5]) : 5391;
if (readers is < 1 or > 1000 || seconds is < 5 or > 600 || documentMiB is < 1 or > 64 || documents is < 1 or > 64)
{
    Console.Error.WriteLine("readers 1..1000, seconds 5..600, document MiB 1..64, documents 1..64");
    return 2;
}

var data = Path.Combine(Path.GetTempPath(), "slow-readers-" + Guid.NewGuid().ToString("N"));
var start = new ProcessStartInfo("dotnet", [serverDll, "serve", "--data", data, "--port", port.ToString(), "--Server:MaxConnections=1200"])
{
    RedirectStandardOutput = true,
    RedirectStandardError = true,
};
start.Environment["DOTNET_gcServer"] = "0";
using var server = Process.Start(start)!;
server.OutputDataReceived += (_, _) => { };
server.ErrorDataReceived += (_, e) => { if (e.Data is not null) Console.Error.WriteLine("server: " + e.Data); };
server.BeginOutputReadLine();
server.BeginErrorReadLine();
var sockets = new List<Socket>();
try
{
    using var http = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{port}"), Timeout = TimeSpan.FromSeconds(60) };
    for (var attempt = 0; ; attempt++)
    {
        try
        {
            using var ping = await http.GetAsync("/indexes");
            break;
        }
        catch (HttpRequestException) when (attempt < 300)
        {
            await Task.Delay(100);
        }
    }

    var body = new byte[documentMiB << 20];
    var head = "{\"pad\": \""u8;
    head.CopyTo(body);
    body.AsSpan(head.Length, body.Length - head.Length - 2).Fill((byte)'p');
    "\"}"u8.CopyTo(body.AsSpan(body.Length - 2));
    for (var i = 0; i < documents; i++)
    {
        using var content = new ByteArrayContent(body);
        content.Headers.ContentType = new System.Net.Http.Headers.MediaTypeHeaderValue("application/json");
        using var put = await http.PutAsync($"/docs/large/{i}", content);
        put.EnsureSuccessStatusCode();
    }

    var idle = Sample(server.Id);
    Console.WriteLine($"before readers: VmRSS {idle.Rss / 1048576.0:F0} MiB, RssAnon {idle.Anon / 1048576.0:F0} MiB");

    var cut = 0;
    var completed = 0;
    using var stop = new CancellationTokenSource(TimeSpan.FromSeconds(seconds));
    var tasks = new List<Task>();
    for (var i = 0; i < readers; i++)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 16 << 10 };
        await socket.ConnectAsync(IPAddress.Loopback, port);
        sockets.Add(socket);
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET /docs/large/{i % documents} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        tasks.Add(ReadSlowlyAsync(socket, stop.Token));
    }

    // A few bytes a second: 4 bytes every second, until the run ends or the server closes.
    async Task ReadSlowlyAsync(Socket socket, CancellationToken token)
    {
        var buffer = new byte[4];
        long received = 0;
        try
        {
            while (!token.IsCancellationRequested)
            {
                var read = await socket.ReceiveAsync(buffer, token);
                if (read == 0)
                {
                    break;
                }

                received += read;
                await Task.Delay(1000, token);
            }
        }
        catch (OperationCanceledException)
        {
            return;
        }
        catch (SocketException)
        {
        }

        if (received >= body.Length)
        {
            Interlocked.Increment(ref completed);
        }
        else
        {
            Interlocked.Increment(ref cut);
        }
    }

    var samples = new List<(double At, long Rss, long Anon)>();
    var clock = Stopwatch.StartNew();
    while (!stop.IsCancellationRequested)
    {
        var s = Sample(server.Id);
        samples.Add((clock.Elapsed.TotalSeconds, s.Rss, s.Anon));
        try
        {
            await Task.Delay(1000, stop.Token);
        }
        catch (OperationCanceledException)
        {
        }
    }

    await Task.WhenAll(tasks);
    var peak = samples.MaxBy(s => s.Rss);
    var last = samples[^1];
    Console.WriteLine($"{readers} readers x {documentMiB} MiB, {seconds} s: peak VmRSS {peak.Rss / 1048576.0:F0} MiB (RssAnon {peak.Anon / 1048576.0:F0}) at {peak.At:F0} s; " +
        $"last VmRSS {last.Rss / 1048576.0:F0} MiB (RssAnon {last.Anon / 1048576.0:F0}); cut off {cut}, completed {completed}");
    Console.WriteLine("per second VmRSS MiB: " + string.Join(' ', samples.Select(s => (s.Rss / 1048576).ToString())));
    return 0;
}
finally
{
    sockets.ForEach(s => s.Dispose());
    if (!server.HasExited)
    {
        server.Kill(entireProcessTree: true);
        await server.WaitForExitAsync();
    }

    Directory.Delete(data, recursive: true);
}

static (long Rss, long Anon) Sample(int pid)
{
    long rss = 0, anon = 0;
    foreach (var line in File.ReadLines($"/proc/{pid}/status"))
    {
        if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
        {
            rss = Kib(line);
        }
        else if (line.StartsWith("RssAnon:", StringComparison.Ordinal))
        {
            anon = Kib(line);
        }
    }

    return (rss, anon);

    static long Kib(string line) => long.Parse(line.Split(' ', StringSplitOptions.RemoveEmptyEntries)[1]) * 1024;
}
