using System.Globalization;

namespace Indexing.Indexer.Tests.Threads;

// What the kernel says of this process's threads, from /proc: each thread's name (comm, at most 15
// characters) and nice value (field 19 of its stat line), read independently of ThreadNice.
internal static class ThreadStat
{
    /// <summary>The nice value of the calling thread.</summary>
    public static int CurrentNice() => NiceOf(File.ReadAllText("/proc/thread-self/stat"));

    /// <summary>Every thread of this process whose name is <paramref name="name"/>, with its nice value.</summary>
    public static List<(int Tid, int Nice)> Named(string name)
    {
        var found = new List<(int, int)>();
        foreach (var task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                if (File.ReadAllText(Path.Combine(task, "comm")).TrimEnd('\n') == name)
                {
                    found.Add((int.Parse(Path.GetFileName(task), CultureInfo.InvariantCulture), NiceOf(File.ReadAllText(Path.Combine(task, "stat")))));
                }
            }
            catch (Exception exception) when (exception is FileNotFoundException or DirectoryNotFoundException or IOException)
            {
                // The thread ended between the listing and the read.
            }
        }

        return found;
    }

    // "tid (comm) state ppid ...": the name may hold spaces and parentheses, so fields are counted
    // after its last ')'. There the state is field 3; nice is field 19.
    private static int NiceOf(string stat)
    {
        var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return int.Parse(fields[19 - 3], CultureInfo.InvariantCulture);
    }
}
