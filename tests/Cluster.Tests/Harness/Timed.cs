using System.Diagnostics;
using Grpc.Core;

namespace Indexing.Cluster.Tests;

/// <summary>One timed call: how long it took, and what it returned or threw.</summary>
public sealed record Timed<T>(string What, TimeSpan Elapsed, T? Result, Exception? Error)
{
    public bool Succeeded => Error is null;

    /// <summary>The exception as the tests pin it: its type, and for gRPC the status code and detail text.</summary>
    public string Outcome => Error switch
    {
        null => "ok",
        RpcException e => $"{e.GetType().Name} {e.StatusCode} \"{e.Status.Detail}\""
            + (e.Status.DebugException is { } debug ? $" (debug: {debug.GetType().Name}: {debug.Message})" : ""),
        _ => $"{Error.GetType().FullName}: {Error.Message} ({ThrownAt(Error)})",
    };

    public override string ToString() => $"{What}: {Elapsed.TotalMilliseconds:F0} ms, {Outcome}";

    // The innermost frame, to tell where a cancellation came from (a stream's write, its read).
    private static string ThrownAt(Exception e) =>
        e.StackTrace?.Split('\n', StringSplitOptions.TrimEntries).FirstOrDefault() ?? "no stack";

    /// <summary>The exception, which must be an <see cref="RpcException"/>; fails with the outcome otherwise.</summary>
    public RpcException RpcError() => Error as RpcException
        ?? throw new Xunit.Sdk.XunitException($"{What}: expected an RpcException, got {Outcome}");
}

public static class Timed
{
    /// <summary>Runs <paramref name="call"/>, timing it and keeping whatever it threw; writes the line to <paramref name="log"/>.</summary>
    public static async Task<Timed<T>> RunAsync<T>(string what, Func<Task<T>> call, Action<string>? log = null)
    {
        var clock = Stopwatch.StartNew();
        Timed<T> timed;
        try
        {
            var result = await call();
            timed = new Timed<T>(what, clock.Elapsed, result, null);
        }
        catch (Exception e)
        {
            timed = new Timed<T>(what, clock.Elapsed, default, e);
        }

        log?.Invoke(timed.ToString());
        return timed;
    }
}
