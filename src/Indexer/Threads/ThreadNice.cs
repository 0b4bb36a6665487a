using System.Runtime.InteropServices;

namespace Indexing.Indexer;

/// <summary>
/// Lowers the OS priority of the calling thread: on Linux, its nice value, set with
/// <c>setpriority(PRIO_PROCESS, gettid(), nice)</c> (on Linux that call names one thread, not the
/// process). Indexing and merge threads run this way so that request threads win the CPU during a
/// rebuild, as RavenDB does with its indexing threads. .NET's <see cref="Thread.Priority"/> does not
/// change the nice value on Linux (it sets the scheduling policy's priority, which SCHED_OTHER
/// ignores, writing back the nice value it read: see LowPriorityMergeScheduler), hence the system call.
/// <para>
/// Only lowering: an unprivileged process may raise a thread's nice value but never lower it
/// again, so a lowered thread stays lowered until it ends. Call it only on threads of your own that
/// end with their work (never on a thread-pool thread). A thread a lowered thread creates inherits
/// its nice value (Lucene's merge threads want that; see the Indexer README for the thread pool).
/// </para>
/// <para>
/// Where it cannot work (not Linux, no <c>gettid</c> in the C library, the call refused) it does
/// nothing, and <see cref="UnsupportedReason"/> says why from the first attempt on, for the host to
/// log once.
/// </para>
/// </summary>
internal static partial class ThreadNice
{
    /// <summary>The highest nice value (the lowest priority) Linux gives a thread.</summary>
    public const int Lowest = 19;

    // <sys/resource.h>: with a thread id, PRIO_PROCESS addresses that one thread on Linux.
    private const int PrioProcess = 0;

    private static string? _unsupportedReason;

    /// <summary>Why lowering a thread's priority does nothing here; null while it works (or was never tried).</summary>
    public static string? UnsupportedReason => Volatile.Read(ref _unsupportedReason);

    /// <summary>
    /// Sets the calling thread's nice value to <paramref name="nice"/> (1..19), unless it is already
    /// at least that; 0 does nothing. Returns whether the thread now runs at that nice value or
    /// lower priority; false where unsupported (see <see cref="UnsupportedReason"/>).
    /// </summary>
    public static bool TryLowerCurrentThread(int nice)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(nice);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(nice, Lowest);
        if (nice == 0)
        {
            return true;
        }

        if (!OperatingSystem.IsLinux())
        {
            return Unsupported($"per-thread nice values are set on Linux only; this is {RuntimeInformation.OSDescription}");
        }

        try
        {
            var tid = (uint)GetTid();
            if (CurrentNice(tid) is { } current && current >= nice)
            {
                return true;
            }

            if (SetPriority(PrioProcess, tid, nice) != 0)
            {
                return Unsupported($"setpriority(PRIO_PROCESS, {tid}, {nice}) failed with errno {Marshal.GetLastPInvokeError()}");
            }

            return true;
        }
        catch (Exception exception) when (exception is EntryPointNotFoundException or DllNotFoundException)
        {
            return Unsupported($"the C library has no gettid/setpriority ({exception.Message})");
        }
    }

    /// <summary>
    /// The calling thread's nice value (-20..19), changing nothing; null where it cannot be read, and
    /// then <see cref="UnsupportedReason"/> says why (a host calls this at start to log that once).
    /// </summary>
    public static int? CurrentThreadNice()
    {
        if (!OperatingSystem.IsLinux())
        {
            Unsupported($"per-thread nice values are set on Linux only; this is {RuntimeInformation.OSDescription}");
            return null;
        }

        try
        {
            return CurrentNice((uint)GetTid());
        }
        catch (Exception exception) when (exception is EntryPointNotFoundException or DllNotFoundException)
        {
            Unsupported($"the C library has no gettid/getpriority ({exception.Message})");
            return null;
        }
    }

    // getpriority returns the nice value itself, so -1 is also a valid answer: errno tells them apart.
    private static int? CurrentNice(uint tid)
    {
        Marshal.SetLastPInvokeError(0);
        var value = GetPriority(PrioProcess, tid);
        return value == -1 && Marshal.GetLastPInvokeError() != 0 ? null : value;
    }

    private static bool Unsupported(string reason)
    {
        Interlocked.CompareExchange(ref _unsupportedReason, $"indexing threads run at the request threads' priority: {reason}.", null);
        return false;
    }

    [LibraryImport("libc", EntryPoint = "gettid")]
    private static partial int GetTid();

    [LibraryImport("libc", EntryPoint = "getpriority", SetLastError = true)]
    private static partial int GetPriority(int which, uint who);

    [LibraryImport("libc", EntryPoint = "setpriority", SetLastError = true)]
    private static partial int SetPriority(int which, uint who, int prio);
}
