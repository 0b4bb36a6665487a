using System.Buffers;
using System.Net;
using System.Net.Sockets;

namespace Indexing.Cluster.Tests;

/// <summary>
/// A loopback TCP forwarder: listens on a free 127.0.0.1 port and relays every connection to one
/// target, both directions, half-closes passed on. Give a process <see cref="Url"/> instead of the
/// target's to be able to cut that one process off from it while everything else still reaches it.
/// </summary>
public sealed class TcpRelay : IDisposable
{
    private const int BufferBytes = 16 * 1024;

    private readonly string _targetHost;
    private readonly int _targetPort;
    private readonly Lock _gate = new();
    private readonly HashSet<Connection> _connections = [];
    private TcpListener? _listener;
    private bool _disposed;
    private int _accepted;

    /// <summary>Relays to <paramref name="targetHost"/>:<paramref name="targetPort"/> from a free port, accepting at once.</summary>
    public TcpRelay(string targetHost, int targetPort)
    {
        _targetHost = targetHost;
        _targetPort = targetPort;
        _listener = Listen(0);
        Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        _ = AcceptAsync(_listener);
    }

    /// <summary>Relays to the host and port of <paramref name="targetUrl"/> (http://127.0.0.1:PORT, an etcd client URL say).</summary>
    public TcpRelay(Uri targetUrl)
        : this(targetUrl.Host, targetUrl.Port)
    {
    }

    public int Port { get; }

    /// <summary>http://127.0.0.1:PORT of the relay, to hand to the process in place of the target's URL.</summary>
    public string Url => $"http://127.0.0.1:{Port}";

    /// <summary>Connections accepted so far, over every cut and restore.</summary>
    public int Accepted => Volatile.Read(ref _accepted);

    /// <summary>Connections open now.</summary>
    public int Open
    {
        get
        {
            lock (_gate)
            {
                return _connections.Count;
            }
        }
    }

    public bool IsCut
    {
        get
        {
            lock (_gate)
            {
                return _listener is null;
            }
        }
    }

    /// <summary>
    /// Stops listening (a connect is refused) and resets every open connection, both sides (an
    /// abortive close, RST: the process sees its connection fail at once rather than at its next
    /// keep-alive). The target is untouched.
    /// </summary>
    public void Cut()
    {
        List<Connection> open;
        lock (_gate)
        {
            _listener?.Stop();
            _listener = null;
            open = [.. _connections];
            _connections.Clear();
        }

        foreach (var connection in open)
        {
            connection.Close(abort: true);
        }
    }

    /// <summary>Listens on the same port again; new connections are relayed as before.</summary>
    public void Restore()
    {
        lock (_gate)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            if (_listener is not null)
            {
                return;
            }

            _listener = Listen(Port);
            _ = AcceptAsync(_listener);
        }
    }

    public void Dispose()
    {
        lock (_gate)
        {
            _disposed = true;
        }

        Cut();
    }

    private static TcpListener Listen(int port)
    {
        var listener = new TcpListener(IPAddress.Loopback, port);
        // Binding again after a cut must not wait for the old connections' TIME_WAIT to pass.
        listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        listener.Start();
        return listener;
    }

    private async Task AcceptAsync(TcpListener listener)
    {
        while (true)
        {
            Socket client;
            try
            {
                client = await listener.AcceptSocketAsync();
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                return; // Stopped by Cut or Dispose.
            }

            Interlocked.Increment(ref _accepted);
            _ = RelayAsync(listener, client);
        }
    }

    private async Task RelayAsync(TcpListener listener, Socket client)
    {
        var upstream = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        client.NoDelay = true;
        var connection = new Connection(client, upstream);
        lock (_gate)
        {
            // Accepted just before a cut: it must not outlive it.
            if (!ReferenceEquals(_listener, listener))
            {
                connection.Close(abort: true);
                return;
            }

            _connections.Add(connection);
        }

        var graceful = false;
        try
        {
            await upstream.ConnectAsync(_targetHost, _targetPort);
            await Task.WhenAll(PumpAsync(client, upstream), PumpAsync(upstream, client));
            graceful = true;
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException or IOException)
        {
            // The target refused or went away, or a cut reset the connection: reset both sides.
        }
        finally
        {
            lock (_gate)
            {
                _connections.Remove(connection);
            }

            connection.Close(abort: !graceful);
        }
    }

    private static async Task PumpAsync(Socket from, Socket to)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(BufferBytes);
        try
        {
            while (true)
            {
                var read = await from.ReceiveAsync(buffer.AsMemory(), SocketFlags.None);
                if (read == 0)
                {
                    to.Shutdown(SocketShutdown.Send);
                    return;
                }

                var sent = 0;
                while (sent < read)
                {
                    sent += await to.SendAsync(buffer.AsMemory(sent, read - sent), SocketFlags.None);
                }
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private sealed class Connection(Socket client, Socket upstream)
    {
        private int _closed;

        /// <summary>
        /// Closes both sockets: after both directions ended, plainly (what is still queued is sent);
        /// on a cut or an error, abortively (linger 0: RST, not FIN). Safe to call more than once.
        /// </summary>
        public void Close(bool abort)
        {
            if (Interlocked.Exchange(ref _closed, 1) != 0)
            {
                return;
            }

            foreach (var socket in new[] { client, upstream })
            {
                try
                {
                    if (abort && socket.Connected)
                    {
                        socket.LingerState = new LingerOption(true, 0);
                    }
                }
                catch (SocketException)
                {
                    // Already reset by the other side: closing is all that is left.
                }

                socket.Dispose();
            }
        }
    }
}
