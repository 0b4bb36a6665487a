using System.Diagnostics;
using Indexing.Engine;
using Indexing.Indexer;
using Spectre.Console;

namespace Indexing.Server.Demo;

// The demo's index part: define an index over the collection (built in place the first time), then
// rebuild it side by side with a changed definition while writers, a querier and a foreground
// reader keep the database busy; report each phase, the queries served and failed, the foreground
// Get p99 before and during the bulk phase, and verify's verdict.
internal sealed class RebuildStep
{
    public const string IndexName = "orders";
    private static readonly TimeSpan _idleWindow = TimeSpan.FromSeconds(5);

    private readonly IAnsiConsole _console;

    public RebuildStep(IAnsiConsole console) => _console = console;

    /// <summary>
    /// Rebuilds to the other definition than the one serving, or to <paramref name="rebuildTo"/> when given
    /// (the same one every run, for runs that must compare: `soak`).
    /// </summary>
    public async Task<RebuildReport> RunAsync(
        IndexingEngine engine, string collection, long documentCount, int writers, CancellationToken cancellationToken, IndexDefinition? rebuildTo = null,
        bool keepDataset = false)
    {
        var v1 = DemoIndexes.Narrow(IndexName, collection);
        var v2 = DemoIndexes.Wide(IndexName, collection);
        if (!engine.ListIndexes().Any(i => i.Name == IndexName))
        {
            engine.DefineIndex(v1);
            await FollowAsync(engine, "initial build", latencies: null, cancellationToken).ConfigureAwait(false);
        }

        // Rebuild to the other definition than the one serving: every demo run changes the index.
        var serving = engine.GetIndex(IndexName).DefinitionHash;
        var next = rebuildTo ?? (serving == v1.DefinitionHash ? v2 : v1);
        await using var traffic = new LiveTraffic(engine, IndexName, collection, documentCount, writers, TimeSpan.FromMilliseconds(5), keepDataset);
        var gets = traffic.Gets;
        _console.MarkupLineInterpolated($"Live traffic: {writers} writers, a querier and a foreground reader; measuring idle Get p99 for {_idleWindow.TotalSeconds:0} s");
        await Task.Delay(_idleWindow, cancellationToken).ConfigureAwait(false);
        var idle = gets.Snapshot(_idleWindow);

        var queriesBefore = traffic.Queries;
        var failedBefore = traffic.FailedQueries;
        var writesBefore = traffic.Writes;
        if (next.DefinitionHash == serving)
        {
            // The same definition again: a define would change nothing, so rebuild it as it is.
            engine.StartRebuild(IndexName);
        }
        else
        {
            engine.DefineIndex(next);
        }

        var bulkLatencies = new List<TimeSpan>();
        var started = Stopwatch.GetTimestamp();
        GetLatencySummary? bulk = null;
        var bulkSeconds = TimeSpan.Zero;
        var final = await FollowAsync(
            engine,
            $"side-by-side rebuild to {MessageText.Quote(next.DefinitionHash[..12])}",
            bulkLatencies,
            cancellationToken,
            gets,
            onBulkEnded: () =>
            {
                bulkSeconds = Stopwatch.GetElapsedTime(started);
                bulk = gets.Snapshot(Min(bulkSeconds, GetLatencies.MaxWindow));
            }).ConfigureAwait(false);
        var elapsed = Stopwatch.GetElapsedTime(started);
        var queries = traffic.Queries - queriesBefore;
        var failed = traffic.FailedQueries - failedBefore;
        var writes = traffic.Writes - writesBefore;
        var failure = traffic.LastQueryFailure;
        await traffic.DisposeAsync().ConfigureAwait(false);

        var verify = engine.Verify(IndexName, cancellationToken);
        bulkLatencies.Sort();
        return new RebuildReport(
            final, elapsed, idle, bulk, Min(bulkSeconds, GetLatencies.MaxWindow),
            bulkLatencies.Count == 0 ? null : bulkLatencies[bulkLatencies.Count / 2],
            bulkLatencies.Count == 0 ? null : bulkLatencies[^1],
            queries, failed, failure, writes, verify);
    }

    private static TimeSpan Min(TimeSpan a, TimeSpan b) => a < b ? a : b;

    private async Task<RebuildProgress> FollowAsync(
        IndexingEngine engine, string title, List<TimeSpan>? latencies, CancellationToken cancellationToken, GetLatencies? gets = null, Action? onBulkEnded = null)
    {
        RebuildProgress? last = null;
        await _console.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn(), new RemainingTimeColumn())
            .StartAsync(async context =>
            {
                var task = context.AddTask(title, maxValue: 1);
                var lastSample = Stopwatch.GetTimestamp();
                while (true)
                {
                    last = engine.GetRebuild(IndexName) ?? throw new InvalidOperationException($"index {MessageText.Quote(IndexName)} has no rebuild to follow.");
                    task.MaxValue = Math.Max(1, last.BytesTotal);
                    task.Value = last.Phase switch
                    {
                        RebuildPhase.Bulk => last.BytesDone,
                        RebuildPhase.Queued => 0,
                        _ => task.MaxValue,
                    };
                    var pressure = last.Prefetch;
                    task.Description = pressure is null || last.Phase != RebuildPhase.Bulk
                        ? $"{title}: {last.Phase}, lag {last.LagEtags:N0} etags"
                        : $"{title}: bulk L={pressure.ConcurrencyLimit} {pressure.MegabytesPerSecondLastSecond:0} MB/s in flight+buffered {ByteSize.Format(pressure.InFlightBytes + pressure.BufferedBytes)} wait {pressure.ConsumerWaitPercent:0}%";
                    if (latencies is not null && gets is not null && last.Phase == RebuildPhase.Bulk && Stopwatch.GetElapsedTime(lastSample) >= TimeSpan.FromSeconds(1))
                    {
                        lastSample = Stopwatch.GetTimestamp();
                        var second = gets.Snapshot(TimeSpan.FromSeconds(1));
                        if (second.Count > 0)
                        {
                            latencies.Add(second.P99);
                        }
                    }

                    if (last.Phase is not (RebuildPhase.Bulk or RebuildPhase.Queued) && onBulkEnded is not null)
                    {
                        onBulkEnded();
                        onBulkEnded = null;
                    }

                    if (last.IsFinished)
                    {
                        task.Value = task.MaxValue;
                        return;
                    }

                    await Task.Delay(250, cancellationToken).ConfigureAwait(false);
                }
            }).ConfigureAwait(false);
        return last!;
    }
}

/// <summary>What the demo's rebuild measured.</summary>
internal sealed record RebuildReport(
    RebuildProgress Rebuild,
    TimeSpan Elapsed,
    GetLatencySummary IdleGets,
    GetLatencySummary? BulkGets,
    TimeSpan BulkGetsWindow,
    TimeSpan? BulkGetP99MedianSecond,
    TimeSpan? BulkGetP99WorstSecond,
    long Queries,
    long FailedQueries,
    string? LastQueryFailure,
    long Writes,
    VerifyReport Verify);

// The two definitions the demo alternates between.
internal static class DemoIndexes
{
    public static IndexDefinition Narrow(string name, string collection) => IndexDefinition.Parse($$"""
        { "name": "{{name}}", "collection": "{{collection}}", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "total", "path": "total", "type": "double", "sortable": true }
        ] }
        """);

    public static IndexDefinition Wide(string name, string collection) => IndexDefinition.Parse($$"""
        { "name": "{{name}}", "collection": "{{collection}}", "fields": [
          { "name": "customer", "path": "customer.name", "type": "text" },
          { "name": "description", "path": "description", "type": "text" },
          { "name": "status", "path": "status", "type": "keyword", "sortable": true },
          { "name": "tier", "path": "customer.tier", "type": "keyword" },
          { "name": "tags", "path": "tags[]", "type": "keyword" },
          { "name": "total", "path": "total", "type": "double", "sortable": true },
          { "name": "itemCount", "path": "itemCount", "type": "long", "sortable": true },
          { "name": "paid", "path": "paid", "type": "bool" }
        ] }
        """);
}
