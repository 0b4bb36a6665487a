using System.Net;
using System.Net.Sockets;

namespace Indexing.Cluster.Tests;

/// <summary>The relay itself, against an in-process echo server: it forwards, a cut resets and refuses, a restore accepts again.</summary>
public sealed class TcpRelayTests
{
    [Fact]
    public async Task Relay_Forwards_CutResetsAndRefuses_RestoreAcceptsOnTheSamePort()
    {
        using var echo = new EchoServer();
        using var relay = new TcpRelay("127.0.0.1", echo.Port);

        using (var client = await ConnectAsync(relay.Port))
        {
            Assert.Equal("ping", await RoundTripAsync(client, "ping"));
            Assert.Equal(1, relay.Accepted);

            relay.Cut();
            Assert.True(relay.IsCut);
            // The open connection is gone: a read ends (reset or end of stream), it does not hang.
            var read = await ReadOrFailAsync(client).WaitAsync(TimeSpan.FromSeconds(10));
            Assert.Equal(0, read);
        }

        var refused = await Assert.ThrowsAsync<SocketException>(() => ConnectAsync(relay.Port));
        Assert.Equal(SocketError.ConnectionRefused, refused.SocketErrorCode);

        relay.Restore();
        using var again = await ConnectAsync(relay.Port);
        Assert.Equal("pong", await RoundTripAsync(again, "pong"));
        Assert.Equal(2, relay.Accepted);
    }

    private static async Task<Socket> ConnectAsync(int port)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        try
        {
            await socket.ConnectAsync(IPAddress.Loopback, port).WaitAsync(TimeSpan.FromSeconds(10));
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    private static async Task<string> RoundTripAsync(Socket socket, string text)
    {
        var bytes = System.Text.Encoding.ASCII.GetBytes(text);
        await socket.SendAsync(bytes, SocketFlags.None);
        var buffer = new byte[bytes.Length];
        var read = 0;
        while (read < buffer.Length)
        {
            var n = await socket.ReceiveAsync(buffer.AsMemory(read), SocketFlags.None).AsTask().WaitAsync(TimeSpan.FromSeconds(10));
            Assert.NotEqual(0, n);
            read += n;
        }

        return System.Text.Encoding.ASCII.GetString(buffer);
    }

    // 0 for an end of stream or a reset: either way the connection is over.
    private static async Task<int> ReadOrFailAsync(Socket socket)
    {
        try
        {
            return await socket.ReceiveAsync(new byte[16], SocketFlags.None);
        }
        catch (SocketException)
        {
            return 0;
        }
    }

    /// <summary>Echoes every byte back on every connection, until disposed.</summary>
    private sealed class EchoServer : IDisposable
    {
        private readonly TcpListener _listener = new(IPAddress.Loopback, 0);

        public EchoServer()
        {
            _listener.Start();
            _ = AcceptAsync();
        }

        public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

        public void Dispose() => _listener.Stop();

        private async Task AcceptAsync()
        {
            while (true)
            {
                Socket socket;
                try
                {
                    socket = await _listener.AcceptSocketAsync();
                }
                catch (Exception e) when (e is SocketException or ObjectDisposedException)
                {
                    return;
                }

                _ = EchoAsync(socket);
            }
        }

        private static async Task EchoAsync(Socket socket)
        {
            using (socket)
            {
                var buffer = new byte[1024];
                try
                {
                    int read;
                    while ((read = await socket.ReceiveAsync(buffer, SocketFlags.None)) > 0)
                    {
                        await socket.SendAsync(buffer.AsMemory(0, read), SocketFlags.None);
                    }
                }
                catch (SocketException)
                {
                    // The relay reset it.
                }
            }
        }
    }
}
