using System.Net;
using System.Net.Sockets;

namespace Indexing.Cluster.Tests;

/// <summary>
/// Free TCP ports on 127.0.0.1 for programs that cannot bind port 0 themselves (etcd): each is bound
/// to port 0 by a listener, read back and released. All listeners are held until every port is read,
/// so one call never hands out the same port twice; another process may still take a port before its
/// user binds it, which the user must treat as a retryable start failure.
/// </summary>
internal static class FreePorts
{
    public static int[] Take(int count)
    {
        var listeners = new List<TcpListener>(count);
        try
        {
            for (var i = 0; i < count; i++)
            {
                var listener = new TcpListener(IPAddress.Loopback, 0);
                listener.Start();
                listeners.Add(listener);
            }

            return [.. listeners.Select(l => ((IPEndPoint)l.LocalEndpoint).Port)];
        }
        finally
        {
            foreach (var listener in listeners)
            {
                listener.Stop();
            }
        }
    }
}
