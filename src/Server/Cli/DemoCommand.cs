using System.CommandLine;
using Indexing.Datasets;
using Indexing.Prefetcher;
using Indexing.Server.Demo;
using Indexing.Storage;

namespace Indexing.Server.Cli;

// `demo`: generate a skewed dataset into the data directory (unless it is there), load it through
// PutMany, prefetch the whole collection with the chosen strategy into a counting sink, and
// print the store status and the pressure summary.
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
            DefaultValueFactory = _ => "adaptive",
        };
        strategy.AcceptOnlyFromAmong([.. PrefetchStrategyNames.All]);
        var directReads = new Option<bool>("--direct-reads")
        {
            Description = "Open the store with RocksDB's DB-wide use_direct_reads, so the OS page cache does not hide I/O.",
        };
        var networkDisk = new Option<bool>("--model-network-disk")
        {
            Description = "Read through the modelled network disk (2 ms per request, 60 MB/s per stream, useful depth 16).",
        };

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
            data, shape, size, seed, strategy, directReads, networkDisk, noRebuild, writers, port, exitWhenDone,
        };
        CommandLine.SetCancellableAction(command, (parse, cancellationToken) =>
        {
            ByteSize.TryParse(parse.GetValue(size), out var bytes);
            var settings = new DemoSettings(
                parse.GetValue(data)!.FullName,
                DatasetShapeNames.Parse(parse.GetValue(shape)!),
                bytes,
                parse.GetValue(seed),
                PrefetchStrategyNames.Parse(parse.GetValue(strategy)!),
                parse.GetValue(directReads),
                parse.GetValue(networkDisk),
                Rebuild: !parse.GetValue(noRebuild),
                Writers: parse.GetValue(writers),
                Port: parse.GetValue(port),
                ExitWhenDone: parse.GetValue(exitWhenDone));
            return new DemoRunner(settings).RunAsync(cancellationToken);
        });
        return command;
    }
}
