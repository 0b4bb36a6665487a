using BenchmarkDotNet.Attributes;
using Indexing.Datasets;
using Indexing.Indexer;
using Indexing.Measurement;

namespace Indexing.Benchmarks.Rebuild;

/// <summary>
/// The foreground Get p99 during a rebuild with the indexing threads (and Lucene's merge threads) at
/// the request threads' priority (nice 0) and below it (nice 10, the default), 2 indexing threads, on
/// the local disk with 4 closed-loop foreground readers (the live-traffic table's load). Adaptive
/// reads and indexes; IndexOnly indexes from memory, so only the CPU is contended. The
/// "p99 during/idle" column is the figure the issue's target reads (at most 1.5 with the lower
/// priority). Run it alone on a quiet machine:
/// <code>
/// dotnet run -c Release --project benchmarks -- --filter '*RebuildPriorityBenchmarks*'
/// </code>
/// </summary>
[Config(typeof(LiveTrafficConfig))]
public class RebuildPriorityBenchmarks : RebuildBenchmarkBase
{
    private const int ForegroundReaders = 4;

    [ParamsSource(nameof(Cases))]
    public RebuildCase Case { get; set; } = null!;

    public static IEnumerable<RebuildCase> Cases =>
        RebuildCase.Grid(30, [Measurement.RebuildDevice.Local], DatasetShape.LogNormal)
            .SelectMany(c => new[] { c with { IndexingThreadNice = 0 }, c with { IndexingThreadNice = IndexOptions.DefaultIndexingThreadNice } });

    protected override RebuildCase CurrentCase => Case;

    protected override IndexOptions IndexOptions => RebuildWorkload.SmallTakes with
    {
        IndexingThreads = 2,
        IndexingThreadNice = Case.IndexingThreadNice ?? IndexOptions.DefaultIndexingThreadNice,
    };

    [Benchmark(Baseline = true)]
    public long Adaptive() => Run(RebuildMode.Adaptive, ForegroundReaders).Documents;

    [Benchmark]
    public long IndexOnly() => Run(RebuildMode.IndexOnly, ForegroundReaders).Documents;

    /// <summary>
    /// Prints the process's threads still at a nice value above 0 after the case's runs: a lowered
    /// indexing thread ends with its build, so any left are threads that inherited the nice value
    /// from one (see the Indexer README, "Indexing threads and their priority").
    /// </summary>
    [GlobalCleanup]
    public void ReportLoweredThreads()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var lowered = new List<string>();
        foreach (var task in Directory.GetDirectories("/proc/self/task"))
        {
            try
            {
                var stat = File.ReadAllText(Path.Combine(task, "stat"));
                var nice = int.Parse(stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[16], System.Globalization.CultureInfo.InvariantCulture);
                if (nice > 0)
                {
                    lowered.Add($"{File.ReadAllText(Path.Combine(task, "comm")).TrimEnd('\n')} (nice {nice})");
                }
            }
            catch (IOException)
            {
                // The thread ended between the listing and the read.
            }
        }

        Console.WriteLine($"// {Case}: {lowered.Count} thread(s) at nice > 0 after the runs{(lowered.Count == 0 ? "" : ": " + string.Join(", ", lowered))}");
    }
}
