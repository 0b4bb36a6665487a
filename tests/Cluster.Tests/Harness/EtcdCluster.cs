using System.Diagnostics;
using System.Globalization;
using System.Text;
using dotnet_etcd;
using Etcdserverpb;
using Grpc.Core;

namespace Indexing.Cluster.Tests;

/// <summary>
/// Three real etcd members (Debian's etcd 3.4), e1, e2 and e3, on 127.0.0.1 with free client and
/// peer ports, each with its own data directory under one temp directory, for tests that kill and
/// restart members under a cluster client. Start with <see cref="StartAsync"/>; dispose kills every
/// member and deletes the data.
/// </summary>
/// <remarks>
/// Raft timing: a heartbeat every 100 ms and a 1,000 ms election timeout (etcd's own defaults, said
/// outright). A follower waits ten missed heartbeats before it campaigns, so a loaded 2-core machine
/// (a build beside the tests, GC pauses of the test host) does not start spurious elections, which
/// would fail calls the tests expect to succeed; a dead leader is still replaced within about 1-2 s.
/// The timeout also fixes etcd's smallest lease TTL, 1.5 election timeouts rounded up to 2 s, so a
/// 3 s lease keeps its 3 s, and the lease extension a new leader grants (one election timeout).
/// Pre-vote is on (etcd 3.5's default): a member that comes back after a kill or after losing quorum
/// asks before it raises the term, so its return does not depose a working leader.
/// </remarks>
public sealed class EtcdCluster : IAsyncDisposable
{
    public const int Size = 3;
    public const int HeartbeatIntervalMs = 100;
    public const int ElectionTimeoutMs = 1000;

    // Lines kept per member for failure messages: etcd logs ~100 lines per start at info level.
    private const int OutputLines = 400;
    private const int StartAttempts = 3;

    private readonly TempDirectory _root = new("indexing-cluster-etcd", create: true);
    private readonly string _token = "harness-" + Guid.NewGuid().ToString("N");
    private readonly Member[] _members;

    private EtcdCluster()
    {
        var ports = FreePorts.Take(2 * Size);
        _members = [.. Enumerable.Range(0, Size).Select(i => new Member(
            $"e{i + 1}", ports[2 * i], ports[(2 * i) + 1], _root.Combine($"e{i + 1}")))];
    }

    /// <summary>The client URLs of all three members, comma-separated: the connection string <see cref="EtcdClient"/> takes.</summary>
    public string Endpoints => string.Join(',', _members.Select(m => m.ClientUrl));

    /// <summary>The last lines each member printed (started, restarted and killed runs alike), for failure messages.</summary>
    public string Output => string.Join('\n', _members.Select(m => m.Tail()));

    /// <summary>Member <paramref name="index"/>'s (0-2) client URL, http://127.0.0.1:PORT.</summary>
    public string ClientUrl(int index) => _members[index].ClientUrl;

    /// <summary>Whether member <paramref name="index"/> has a running process.</summary>
    public bool IsRunning(int index) => _members[index].IsRunning;

    /// <summary>A client over all three members; the caller disposes it.</summary>
    public EtcdClient Client() => new(Endpoints);

    /// <summary>A client of member <paramref name="index"/> alone (Status and serializable reads of that member); the caller disposes it.</summary>
    public EtcdClient MemberClient(int index) => new(ClientUrl(index));

    /// <summary>
    /// Starts e1-e3 as a new cluster and returns once every member follows one leader and a put and
    /// a linearizable get go through. A member that could not bind its port (taken between
    /// <see cref="FreePorts"/> and etcd's bind) makes a fresh start on new ports, up to three times.
    /// </summary>
    public static async Task<EtcdCluster> StartAsync(TimeSpan? timeout = null)
    {
        var wait = timeout ?? TimeSpan.FromSeconds(30);
        for (var attempt = 1; ; attempt++)
        {
            var cluster = new EtcdCluster();
            try
            {
                for (var i = 0; i < Size; i++)
                {
                    cluster._members[i].Start(cluster.Arguments(i, "new"));
                }

                await cluster.WaitHealthyAsync(wait);
                return cluster;
            }
            catch (Exception) when (attempt < StartAttempts && cluster._members.Any(m => m.PortTaken))
            {
                await cluster.DisposeAsync();
            }
            catch
            {
                await cluster.DisposeAsync();
                throw;
            }
        }
    }

    /// <summary>SIGKILL to member <paramref name="index"/>: it stops at once, sockets reset by the kernel, no shutdown of any kind.</summary>
    public void KillMember(int index) => _members[index].Kill();

    /// <summary>Restarts member <paramref name="index"/> on its ports and data directory (--initial-cluster-state existing); returns at once.</summary>
    public void StartMember(int index)
    {
        if (_members[index].IsRunning)
        {
            throw new InvalidOperationException($"{_members[index].Name} is running");
        }

        _members[index].Start(Arguments(index, "existing"));
    }

    /// <summary>
    /// Waits until the cluster serves: every running member reports the same leader (Status of that
    /// member alone), and a put then a linearizable get of a harness key go through a client over all
    /// endpoints. Fails with the members' output past <paramref name="timeout"/>, or at once when a
    /// member that was not killed has exited.
    /// </summary>
    public async Task WaitHealthyAsync(TimeSpan timeout)
    {
        var clock = Stopwatch.StartNew();
        var last = "nothing tried yet";
        while (true)
        {
            foreach (var member in _members.Where(m => m.ExitedUnexpectedly))
            {
                throw new InvalidOperationException($"etcd member {member.Name} exited with {member.ExitCode}:\n{Output}");
            }

            var left = timeout - clock.Elapsed;
            if (left <= TimeSpan.Zero)
            {
                throw new TimeoutException($"etcd cluster not healthy within {timeout} (last: {last}):\n{Output}");
            }

            var deadline = DateTime.UtcNow + Min(left, TimeSpan.FromSeconds(2));
            try
            {
                var leaders = new List<ulong>();
                for (var i = 0; i < Size; i++)
                {
                    if (_members[i].IsRunning)
                    {
                        leaders.Add((await StatusAsync(i, deadline)).Leader);
                    }
                }

                if (leaders.Count == 0 || leaders.Contains(0UL) || leaders.Distinct().Count() > 1)
                {
                    last = "leaders reported: " + string.Join(", ", leaders.Select(l => l.ToString("x", CultureInfo.InvariantCulture)));
                }
                else
                {
                    using var client = Client();
                    var value = Guid.NewGuid().ToString("N");
                    await client.PutAsync("/harness/health", value, deadline: deadline);
                    var read = await client.GetAsync("/harness/health", deadline: deadline);
                    if (read.Kvs.Count == 1 && read.Kvs[0].Value.ToStringUtf8() == value)
                    {
                        return;
                    }

                    last = "the health key read back wrong";
                }
            }
            catch (RpcException e)
            {
                last = $"{e.StatusCode}: {e.Status.Detail}";
            }
            catch (OperationCanceledException e)
            {
                last = e.GetType().Name;
            }

            await Task.Delay(100);
        }
    }

    /// <summary>Status of member <paramref name="index"/> alone (its own view of the leader and term).</summary>
    public async Task<StatusResponse> StatusAsync(int index, DateTime deadline)
    {
        using var client = MemberClient(index);
        return await client.StatusAsync(new StatusRequest(), deadline: deadline);
    }

    /// <summary>The index of the member that is leader now, asked of the running members; fails past <paramref name="timeout"/>.</summary>
    public async Task<int> LeaderIndexAsync(TimeSpan timeout)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < timeout)
        {
            for (var i = 0; i < Size; i++)
            {
                if (!_members[i].IsRunning)
                {
                    continue;
                }

                try
                {
                    var status = await StatusAsync(i, DateTime.UtcNow.AddSeconds(1));
                    if (status.Leader != 0 && status.Leader == status.Header.MemberId)
                    {
                        return i;
                    }
                }
                catch (RpcException)
                {
                    // Not answering yet: ask the next one.
                }
            }

            await Task.Delay(100);
        }

        throw new TimeoutException($"no etcd member is leader within {timeout}:\n{Output}");
    }

    /// <summary>Kills every running member (SIGKILL: nothing is kept, so no shutdown is waited for) and deletes the data.</summary>
    public ValueTask DisposeAsync()
    {
        foreach (var member in _members)
        {
            member.Dispose();
        }

        _root.Dispose();
        return ValueTask.CompletedTask;
    }

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;

    private List<string> Arguments(int index, string state)
    {
        var member = _members[index];
        return
        [
            "--name", member.Name,
            "--data-dir", member.DataDirectory,
            "--listen-client-urls", member.ClientUrl,
            "--advertise-client-urls", member.ClientUrl,
            "--listen-peer-urls", member.PeerUrl,
            "--initial-advertise-peer-urls", member.PeerUrl,
            "--initial-cluster", string.Join(',', _members.Select(m => $"{m.Name}={m.PeerUrl}")),
            "--initial-cluster-token", _token,
            "--initial-cluster-state", state,
            "--heartbeat-interval", HeartbeatIntervalMs.ToString(CultureInfo.InvariantCulture),
            "--election-timeout", ElectionTimeoutMs.ToString(CultureInfo.InvariantCulture),
            "--pre-vote=true",
            "--logger", "zap",
            "--log-outputs", "stderr",
        ];
    }

    private sealed class Member(string name, int clientPort, int peerPort, string dataDirectory) : IDisposable
    {
        private readonly Queue<string> _tail = new();
        private Process? _process;
        private bool _killed;

        public string Name { get; } = name;
        public string ClientUrl { get; } = $"http://127.0.0.1:{clientPort}";
        public string PeerUrl { get; } = $"http://127.0.0.1:{peerPort}";
        public string DataDirectory { get; } = dataDirectory;

        public bool IsRunning => _process is { HasExited: false };
        public bool ExitedUnexpectedly => _process is { HasExited: true } && !_killed;
        public int ExitCode => _process?.ExitCode ?? -1;

        // etcd prints the bind error and exits; the caller starts over on other ports.
        public bool PortTaken
        {
            get
            {
                lock (_tail)
                {
                    return _tail.Any(l => l.Contains("address already in use", StringComparison.Ordinal));
                }
            }
        }

        public void Start(IReadOnlyList<string> arguments)
        {
            var start = new ProcessStartInfo("etcd")
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            foreach (var argument in arguments)
            {
                start.ArgumentList.Add(argument);
            }

            // etcd reads ETCD_* variables as flags: none from the test host's environment.
            foreach (var variable in start.Environment.Keys.Where(k => k.StartsWith("ETCD", StringComparison.Ordinal)).ToList())
            {
                start.Environment.Remove(variable);
            }

            _process?.Dispose();
            _killed = false;
            Line($"--- {Name}: etcd {string.Join(' ', arguments)}");
            var process = new Process { StartInfo = start };
            process.OutputDataReceived += (_, e) => Line(e.Data);
            process.ErrorDataReceived += (_, e) => Line(e.Data);
            try
            {
                process.Start();
            }
            catch (System.ComponentModel.Win32Exception e)
            {
                process.Dispose();
                throw new InvalidOperationException(
                    $"etcd could not be started ({e.Message}): the cluster tests need Debian's etcd-server (apt-get install etcd-server; .ci/run installs it).", e);
            }

            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
            _process = process;
        }

        public void Kill()
        {
            if (_process is null || _process.HasExited)
            {
                throw new InvalidOperationException($"{Name} is not running");
            }

            _killed = true;
            _process.Kill();
            _process.WaitForExit();
            Line($"--- {Name}: killed (SIGKILL)");
        }

        public string Tail()
        {
            lock (_tail)
            {
                var text = new StringBuilder();
                foreach (var line in _tail)
                {
                    text.Append('[').Append(Name).Append("] ").AppendLine(line);
                }

                return text.ToString();
            }
        }

        public void Dispose()
        {
            if (_process is { HasExited: false })
            {
                _killed = true;
                _process.Kill();
                _process.WaitForExit();
            }

            _process?.Dispose();
            _process = null;
        }

        private void Line(string? line)
        {
            if (line is null)
            {
                return;
            }

            lock (_tail)
            {
                _tail.Enqueue(line);
                while (_tail.Count > OutputLines)
                {
                    _tail.Dequeue();
                }
            }
        }
    }
}
