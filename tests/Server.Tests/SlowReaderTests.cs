using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Indexing.Server.Hosting;
using Microsoft.Extensions.DependencyInjection;

namespace Indexing.Server.Tests;

/// <summary>
/// Answers read by clients that stall: a document's body goes to Kestrel in pieces, so a stalled
/// client leaves one piece in Kestrel's memory pool rather than a copy of the whole body, and
/// <c>Server:MinResponseBytesPerSecond</c> cuts it off, for <c>GET /docs/{id}</c> and for
/// <c>include=docs</c>.
/// </summary>
public sealed class SlowReaderTests
{
    private const int LargeDocumentBytes = 8 << 20;
    private static readonly TimeSpan _hangGuard = TimeSpan.FromSeconds(90);

    [Fact]
    public async Task GetDocument_StalledReaders_KestrelsPoolHoldsPiecesNotBodies()
    {
        const int readers = 4;
        await using var server = await RunningServer.StartAsync();
        server.Store.Put("orders/large", LargeDocument(LargeDocumentBytes));
        using var pool = new KestrelPoolListener(server);
        using var timeout = new CancellationTokenSource(_hangGuard);
        var sockets = new List<Socket>();
        try
        {
            for (var i = 0; i < readers; i++)
            {
                var socket = await ConnectAsync(server, timeout.Token);
                sockets.Add(socket);
                await SendGetAsync(socket, "/docs/orders/large", timeout.Token);
            }

            // The server writes until the sockets' buffers are full; then every flush waits.
            await pool.WaitUntilQuietAsync(TimeSpan.FromSeconds(1), timeout.Token);
            var allocated = pool.AllocatedBytes;
            Assert.True(allocated > 0, "the listener saw no allocation by Kestrel's memory pool: it listens to the wrong meter");
            // Before: each stalled answer had its whole body copied into the pool (32 MiB for 4 readers).
            Assert.True(allocated < LargeDocumentBytes, $"Kestrel's pool allocated {allocated:N0} bytes for {readers} stalled readers of a {LargeDocumentBytes:N0}-byte document");
        }
        finally
        {
            sockets.ForEach(s => s.Dispose());
        }
    }

    [Fact]
    public async Task GetDocument_ReaderStalls_CutOffByTheMinimumResponseRate()
    {
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.MinResponseBytesPerSecondSetting] = (1 << 20).ToString(System.Globalization.CultureInfo.InvariantCulture),
        });
        var body = LargeDocument(4 * LargeDocumentBytes);
        server.Store.Put("orders/large", body);
        using var timeout = new CancellationTokenSource(_hangGuard);
        using var socket = await ConnectAsync(server, timeout.Token);
        await SendGetAsync(socket, "/docs/orders/large", timeout.Token);

        // Stalled for 20 s: at 1 MiB/s the server gives up once the bytes in the socket buffers, at the
        // rate, and the 5 s grace have passed (Kestrel's default, 240 bytes/s, would wait for 39 hours).
        await Task.Delay(TimeSpan.FromSeconds(20), timeout.Token);
        var received = await DrainAsync(socket, timeout.Token);

        Assert.True(received < body.Length, $"received {received:N0} bytes of a {body.Length:N0}-byte body after stalling 20 s: not cut off");
    }

    [Fact]
    public async Task QueryWithDocuments_ReaderStalls_CutOffByTheMinimumResponseRate()
    {
        const int documents = 3;
        await using var server = await RunningServer.StartAsync(new Dictionary<string, string?>
        {
            [ServerOptions.MinResponseBytesPerSecondSetting] = (1 << 20).ToString(System.Globalization.CultureInfo.InvariantCulture),
        });
        var body = LargeDocument(2 * LargeDocumentBytes);
        for (var i = 0; i < documents; i++)
        {
            server.Store.Put($"orders/{i}", body);
        }

        await server.DefineIndexAsync("""{"name": "orders-by-status", "collection": "orders", "fields": [{"name": "status", "path": "status", "type": "keyword"}]}""", documents);
        using var timeout = new CancellationTokenSource(_hangGuard);
        using var socket = await ConnectAsync(server, timeout.Token);
        await SendGetAsync(socket, "/indexes/orders-by-status/query?q=status:open&include=docs", timeout.Token);

        // The answer is 48 MiB: written as one batch it would be given 48 s at 1 MiB/s; written in
        // pieces, the stall is judged on what reached the socket buffers.
        await Task.Delay(TimeSpan.FromSeconds(20), timeout.Token);
        var received = await DrainAsync(socket, timeout.Token);

        Assert.True(received < documents * body.Length, $"received {received:N0} bytes of {documents} documents of {body.Length:N0} bytes after stalling 20 s: not cut off");
    }

    // {"status": "open", "pad": "ppp..."} of exactly `bytes` bytes.
    private static byte[] LargeDocument(int bytes)
    {
        var head = "{\"status\": \"open\", \"pad\": \""u8;
        var tail = "\"}"u8;
        var document = new byte[bytes];
        head.CopyTo(document);
        document.AsSpan(head.Length, bytes - head.Length - tail.Length).Fill((byte)'p');
        tail.CopyTo(document.AsSpan(bytes - tail.Length));
        return document;
    }

    // A small receive buffer, so the kernel takes little of the answer off the server.
    private static async Task<Socket> ConnectAsync(RunningServer server, CancellationToken cancellationToken)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 16 << 10 };
        await socket.ConnectAsync(IPAddress.Loopback, server.Host.BaseAddress.Port, cancellationToken);
        return socket;
    }

    private static async Task SendGetAsync(Socket socket, string path, CancellationToken cancellationToken) =>
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), cancellationToken);

    // Reads as fast as possible until the server closes or resets, or sends nothing for 2 s; the bytes received.
    private static async Task<long> DrainAsync(Socket socket, CancellationToken cancellationToken)
    {
        var buffer = new byte[1 << 20];
        long received = 0;
        while (true)
        {
            using var quiet = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            quiet.CancelAfter(TimeSpan.FromSeconds(2));
            int read;
            try
            {
                read = await socket.ReceiveAsync(buffer, quiet.Token);
            }
            catch (SocketException)
            {
                return received;
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                return received;
            }

            if (read == 0)
            {
                return received;
            }

            received += read;
        }
    }

    // Bytes Kestrel's memory pool allocated for this server's host (its meter comes from the host's
    // IMeterFactory, so other servers in the test process are not counted).
    private sealed class KestrelPoolListener : IDisposable
    {
        private readonly MeterListener _listener = new();
        private long _allocated;
        private long _lastChangeTicks = Environment.TickCount64;

        public KestrelPoolListener(RunningServer server)
        {
            var factory = server.Host.Services.GetRequiredService<IMeterFactory>();
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Name == "aspnetcore.memory_pool.allocated" && ReferenceEquals(instrument.Meter.Scope, factory))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((_, value, _, _) =>
            {
                Interlocked.Add(ref _allocated, value);
                Volatile.Write(ref _lastChangeTicks, Environment.TickCount64);
            });
            _listener.Start();
        }

        public long AllocatedBytes => Interlocked.Read(ref _allocated);

        public async Task WaitUntilQuietAsync(TimeSpan quiet, CancellationToken cancellationToken)
        {
            await Task.Delay(quiet, cancellationToken);
            while (Environment.TickCount64 - Volatile.Read(ref _lastChangeTicks) < quiet.TotalMilliseconds)
            {
                await Task.Delay(100, cancellationToken);
            }
        }

        public void Dispose() => _listener.Dispose();
    }
}
