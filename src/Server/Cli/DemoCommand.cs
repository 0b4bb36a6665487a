using System.CommandLine;
using Indexing.Datasets;
using Indexing.Measurement;
using Indexing.Server.Demo;

namespace Indexing.Server.Cli;

// `demo`: generate a skewed dataset into the data directory (unless it is there), load it through
// PutMany, prefetch the whole collection with the chosen strategy into a counting sink (by default
// through a slow modelled disk with direct reads, so the controller has work to do), and print the
// store status and the pressure summary; then the side-by-side rebuild.
internal static class DemoCommand
{
    public const string DefaultSize = "1GiB";

    public static Command Create()
    {
        var data = new Option<DirectoryInfo>("--data")
        {
            Description = "Data directory: the RocksDB store lives in <data>/store.",
            DefaultValueFactory = _ => new DirectoryInfo("data"),
        };
        var shape = new Option<string>("--shape")
        {
            Description = "Dataset size shape (only used when generating).",
            DefaultValueFactory = _ => DatasetShape.RareGiants.ToName(),
        };
        shape.AcceptOnlyFromAmong([.. DatasetShapeNames.All]);
        var size = new Option<string>("--size")
        {
            Description = "Dataset size to generate, e.g. 256MiB, 1GiB, 2.5GB.",
            DefaultValueFactory = _ => DefaultSize,
        };
        OptionRules.Size(size, 1 << 20, long.MaxValue, "256MiB, 1GiB or 2.5GB");
        var seed = new Option<int>("--seed")
        {
            Description = "Generator seed: the same seed and size give the same documents.",
            DefaultValueFactory = _ => DatasetSpec.DefaultSeed,
        };
        var strategy = new Option<string>("--strategy")
        {
            Description = "Prefetch strategy to read the collection with.",
            DefaultValueFactory = _ => PrefetchPass.AdaptiveStrategy,
        };
        strategy.AcceptOnlyFromAmong([.. PrefetchPass.Strategies]);
        var defaultDisk = DemoSettings.DefaultPrefetchDisk;
        var directReads = new Option<bool>("--direct-reads")
        {
            Description = "Open the store with RocksDB's DB-wide use_direct_reads, so the OS page cache does not hide I/O (--direct-reads false: through the page cache).",
            DefaultValueFactory = _ => true,
        };
        var networkDisk = new Option<bool>("--model-network-disk")
        {
            Description = "Read the prefetch pass through a modelled network disk, where reading is the hard part (--model-network-disk false: the local disk as it is).",
            DefaultValueFactory = _ => true,
        };
        var streamMbps = new Option<double>("--disk-stream-mbps")
        {
            Description = "Modelled disk: bandwidth of one request stream, in MB/s.",
            DefaultValueFactory = _ => defaultDisk.StreamBandwidthBytesPerSecond!.Value / 1e6,
        };
        var latency = new Option<double>("--disk-latency-ms")
        {
            Description = "Modelled disk: fixed cost of every request, in ms.",
            DefaultValueFactory = _ => defaultDisk.RequestLatency!.Value.TotalMilliseconds,
        };
        var queueDepth = new Option<int>("--disk-queue-depth")
        {
            Description = "Modelled disk: requests serviced at once; more wait in line.",
            DefaultValueFactory = _ => defaultDisk.UsefulQueueDepth!.Value,
        };
        OptionRules.Positive(streamMbps);
        OptionRules.Positive(latency, allowZero: true);
        OptionRules.InRange(queueDepth, 1, 4096);

        var noRebuild = new Option<bool>("--no-rebuild")
        {
            Description = "Stop after the prefetch pass: do not define the index nor rebuild it side by side.",
        };
        var writers = new Option<int>("--writers")
        {
            Description = "Background writers changing documents during the rebuild (each about 200 writes/s).",
            DefaultValueFactory = _ => 2,
        };
        OptionRules.InRange(writers, 0, 64);
        var indexingThreads = OptionRules.IndexingThreads();

        var port = new Option<int>("--port")
        {
            Description = $"Port of the server the demo runs (its admin page shows the run live); 0 picks a free one.",
            DefaultValueFactory = _ => Hosting.ServerOptions.DefaultPort,
        };
        OptionRules.InRange(port, 0, 65535, "0 picks a free port");
        var exitWhenDone = new Option<bool>("--exit-when-done")
        {
            Description = "Exit when the demo's steps are done instead of serving until Ctrl+C (for scripts).",
        };

        var command = new Command("demo", "Start the server, generate a skewed dataset (unless present) and load it, prefetch it with the adaptive prefetcher, then rebuild an index over it side by side while writers and queries run; keeps serving until Ctrl+C.")
        {
            data, shape, size, seed, strategy, directReads, networkDisk, streamMbps, latency, queueDepth, noRebuild, writers, indexingThreads, port, exitWhenDone,
        };
        Option[] diskOptions = [streamMbps, latency, queueDepth];
        command.Validators.Add(result =>
        {
            if (result.GetResult(networkDisk) is { Tokens.Count: > 0 } given && !result.GetValue(networkDisk)
                && diskOptions.FirstOrDefault(o => result.GetResult(o) is { Tokens.Count: > 0 }) is { } disk)
            {
                result.AddError($"{disk.Name} describes the modelled network disk, but {given.Option.Name} is false; drop one of them.");
            }
        });
        CommandLine.SetCancellableAction(command, (parse, cancellationToken) =>
        {
            ByteSize.TryParse(parse.GetValue(size), out var bytes);
            var settings = new DemoSettings(
                parse.GetValue(data)!.FullName,
                DatasetShapeNames.Parse(parse.GetValue(shape)!),
                bytes,
                parse.GetValue(seed),
                parse.GetValue(strategy)!,
                parse.GetValue(directReads),
                parse.GetValue(networkDisk)
                    ? RebuildDevice.ModelledNetworkDisk(
                        requestLatency: TimeSpan.FromMilliseconds(parse.GetValue(latency)),
                        streamBandwidthBytesPerSecond: (long)(parse.GetValue(streamMbps) * 1e6),
                        usefulQueueDepth: parse.GetValue(queueDepth))
                    : null,
                Rebuild: !parse.GetValue(noRebuild),
                Writers: parse.GetValue(writers),
                Port: parse.GetValue(port),
                ExitWhenDone: parse.GetValue(exitWhenDone),
                IndexingThreads: parse.GetValue(indexingThreads));
            return new DemoRunner(settings).RunAsync(cancellationToken);
        });
        return command;
    }
}
