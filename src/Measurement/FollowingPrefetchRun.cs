using System.Diagnostics;

using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Measurement;

/// <summary>How one read of a collection reached its rate.</summary>
/// <param name="Label">Which read: "first" (the device knows nothing), "following" (after the first, on the same device), "fixed L=n".</param>
/// <param name="Bytes">Document bytes read.</param>
/// <param name="Wall">From the start to the last batch.</param>
/// <param name="FinalMegabytesPerSecond">The rate over the read's second half (decimal MB/s).</param>
/// <param name="TimeTo80Percent">When the rate over the last quarter second first reached 80% of the final rate; null if it never did.</param>
/// <param name="FirstDecision">The controller's first decision, with its reason; null for a fixed L.</param>
public sealed record FollowingPrefetchFigures(string Label, long Bytes, TimeSpan Wall, double FinalMegabytesPerSecond, TimeSpan? TimeTo80Percent, string? FirstDecision)
{
    /// <summary>The mean rate over the whole read (decimal MB/s).</summary>
    public double MeanMegabytesPerSecond => Bytes / 1e6 / Wall.TotalSeconds;

    /// <summary>One line, for a log.</summary>
    public override string ToString() => FormattableString.Invariant(
        $"{Label}: {Bytes / 1e6:0} MB in {Wall.TotalSeconds:0.00} s, mean {MeanMegabytesPerSecond:0} MB/s, final {FinalMegabytesPerSecond:0} MB/s, 80% of it at {(TimeTo80Percent is { } t ? $"{t.TotalSeconds:0.00} s" : "never")}{(FirstDecision is null ? string.Empty : $"; first decision: {FirstDecision}")}");
}

/// <summary>
/// Reading alone (a sink that takes every batch at once), on a modelled disk, to see how fast a
/// prefetch that follows another on the same device reaches its rate (issue 53: 80% of the final rate
/// within 0.5 s, at least 0.85x BestFixed). The first adaptive read starts from nothing; the following
/// one shares the first's device memory, as the engine's prefetches do; the fixed-L reads give the
/// best fixed L's rate. Rates are sampled at every take, so the resolution is the sink's, not the
/// controller's tick. <c>lab/tools/following-prefetch.cs</c> runs it.
/// </summary>
public static class FollowingPrefetchRun
{
    private static readonly TimeSpan Window = TimeSpan.FromMilliseconds(250);

    /// <summary>
    /// Reads the collection of the store in <paramref name="storeDirectory"/> through <paramref name="device"/>
    /// (a modelled disk): first, following (same device memory), then at each fixed L of <paramref name="fixedConcurrencies"/>.
    /// </summary>
    public static async Task<IReadOnlyList<FollowingPrefetchFigures>> RunAsync(
        string storeDirectory, string collection, RebuildDevice device, IReadOnlyList<int> fixedConcurrencies, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(device);
        ArgumentNullException.ThrowIfNull(fixedConcurrencies);
        using var store = DocumentStore.Open(storeDirectory, new StoreOptions(directReads: true));
        var model = device.NetworkDisk is { } disk ? new NetworkDiskModel(disk) : null;
        var budget = Indexer.IndexOptions.DefaultPrefetchBudgetBytes;
        var engine = new PrefetchOptions { BudgetBytes = budget, SharedBudget = new SharedPrefetchBudget(budget), Devices = new PrefetchDevices() };
        var figures = new List<FollowingPrefetchFigures>
        {
            await ReadAsync("first", store, collection, engine, model, cancellationToken).ConfigureAwait(false),
            await ReadAsync("following", store, collection, engine, model, cancellationToken).ConfigureAwait(false),
        };
        foreach (var concurrency in fixedConcurrencies)
        {
            var controller = new ControllerOptions { InitialConcurrency = concurrency, MaxConcurrency = concurrency, FixedConcurrency = concurrency };
            var options = new PrefetchOptions { BudgetBytes = budget, Controller = controller };
            figures.Add(await ReadAsync($"fixed L={concurrency}", store, collection, options, model, cancellationToken).ConfigureAwait(false));
        }

        return figures;
    }

    private static async Task<FollowingPrefetchFigures> ReadAsync(
        string label, DocumentStore store, string collection, PrefetchOptions options, NetworkDiskModel? model, CancellationToken cancellationToken)
    {
        var samples = new List<(double Seconds, long Bytes)> { (0, 0) };
        var started = Stopwatch.GetTimestamp();
        long bytes = 0;
        string? firstDecision;
        await using (var source = Prefetch.Start(store, collection, PrefetchStrategy.Adaptive, options, model, cancellationToken: cancellationToken))
        {
            while (await source.TakeAsync(int.MaxValue, long.MaxValue, cancellationToken).ConfigureAwait(false) is { } batch)
            {
                bytes += batch.TotalBytes;
                samples.Add((Stopwatch.GetElapsedTime(started).TotalSeconds, bytes));
            }

            var decisions = source.Pressure.RecentDecisions;
            firstDecision = options.Controller.FixedConcurrency is null && decisions.Length > 0 ? decisions[0].Reason : null;
        }

        var wall = samples[^1].Seconds;
        var half = wall / 2;
        var atHalf = BytesAt(samples, half);
        var finalRate = (bytes - atHalf) / (wall - half);
        TimeSpan? to80 = null;
        foreach (var (seconds, _) in samples)
        {
            if (seconds >= Window.TotalSeconds
                && (BytesAt(samples, seconds) - BytesAt(samples, seconds - Window.TotalSeconds)) / Window.TotalSeconds >= 0.8 * finalRate)
            {
                to80 = TimeSpan.FromSeconds(seconds);
                break;
            }
        }

        return new FollowingPrefetchFigures(label, bytes, TimeSpan.FromSeconds(wall), finalRate / 1e6, to80, firstDecision);
    }

    // Bytes taken by time t, linear between two takes.
    private static double BytesAt(List<(double Seconds, long Bytes)> samples, double t)
    {
        for (var i = 1; i < samples.Count; i++)
        {
            if (samples[i].Seconds >= t)
            {
                var (t0, b0) = samples[i - 1];
                var (t1, b1) = samples[i];
                return t1 == t0 ? b1 : b0 + ((b1 - b0) * (t - t0) / (t1 - t0));
            }
        }

        return samples[^1].Bytes;
    }
}
