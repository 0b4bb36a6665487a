extern alias server;

using System.CommandLine;
using System.Globalization;
using Indexing.Datasets;
using server::Indexing.Server.Cli;
using server::Indexing.Server.Hosting;
using Indexing.Storage;

namespace Indexing.Lab.Soak;

// The scale run's command line (SoakRunner.cs): the lab executable's root command. Tokens it does not
// know are passed on to the server's configuration, as `serve` does (--Storage:RowCacheBytes=64MiB,
// --Storage:NativeLibrary=jemalloc).
internal static class SoakCommand
{
    public const string DefaultSize = "10GiB";

    public static RootCommand Create()
    {
        var data = new Option<DirectoryInfo>("--data")
        {
            Description = "Data directory (store, indexes, dataset marker); the dataset is loaded once and reused by later runs.",
            DefaultValueFactory = _ => new DirectoryInfo("soak-data"),
        };
        var shape = new Option<string>("--shape")
        {
            Description = "Dataset size shape (only used when generating).",
            DefaultValueFactory = _ => DatasetShape.RareGiants.ToName(),
        };
        shape.AcceptOnlyFromAmong([.. DatasetShapeNames.All]);
        var size = new Option<string>("--size")
        {
            Description = "Dataset size to generate, e.g. 10GiB (only used when generating).",
            DefaultValueFactory = _ => DefaultSize,
        };
        OptionRules.Size(size, 1 << 20, long.MaxValue, "10GiB or 512MiB");
        var seed = new Option<int>("--seed")
        {
            Description = "Generator seed.",
            DefaultValueFactory = _ => DatasetSpec.DefaultSeed,
        };
        var writers = new Option<int>("--writers")
        {
            Description = "Background writers during and after the rebuild (each about 200 writes/s).",
            DefaultValueFactory = _ => 2,
        };
        OptionRules.InRange(writers, 0, 64);
        var port = new Option<int>("--port")
        {
            Description = "Port of the server (its admin page shows memory and the rebuild live); 0 picks a free one.",
            DefaultValueFactory = _ => ServerOptions.DefaultPort,
        };
        OptionRules.InRange(port, 0, 65535, "0 picks a free port");
        var directReads = new Option<bool>("--direct-reads")
        {
            Description = "Open the store with RocksDB's DB-wide use_direct_reads.",
        };
        var after = new Option<int>("--after-seconds")
        {
            Description = "Seconds of live traffic after the rebuild (the cache hit rate and RSS after it).",
            DefaultValueFactory = _ => 60,
        };
        OptionRules.InRange(after, 1, 3600);
        var output = new Option<DirectoryInfo>("--out")
        {
            Description = "Where scale-LABEL.csv, .svg, .json and .md are written.",
            DefaultValueFactory = _ => new DirectoryInfo(Path.Combine("benchmarks", "results", "raw")),
        };
        var label = new Option<string?>("--label")
        {
            Description = "The run's name in the file names. Default: the size and the allocator, e.g. 10GiB-jemalloc.",
        };
        label.Validators.Add(result =>
        {
            if (result.GetValueOrDefault<string?>() is { } text && (text.Length is 0 or > 64 || !text.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_' or '.')))
            {
                result.AddError($"--label {MessageText.Quote(text)} must be 1 to 64 letters, digits, '-', '_' or '.' (it becomes part of file names).");
            }
        });

        var command = new RootCommand(
            "The scale run: load a dataset (10 GiB by default, unless loaded before), build an index, rebuild it side by side under live traffic " +
            "(two writers, a querier, a foreground reader), sample memory every second, and write scale-LABEL.csv/.svg/.json/.md. " +
            "Server settings pass through, e.g. --Storage:RowCacheBytes=64MiB; the allocator is the process's (lab/tools/scale-run.sh).")
        {
            data, shape, size, seed, writers, port, directReads, after, output, label,
        };
        command.TreatUnmatchedTokensAsErrors = false;
        CommandLine.SetCancellableAction(command, (parse, cancellationToken) =>
        {
            ByteSize.TryParse(parse.GetValue(size), out var bytes);
            var settings = new SoakSettings(
                parse.GetValue(data)!.FullName,
                DatasetShapeNames.Parse(parse.GetValue(shape)!),
                bytes,
                parse.GetValue(seed),
                parse.GetValue(writers),
                parse.GetValue(port),
                parse.GetValue(directReads),
                TimeSpan.FromSeconds(parse.GetValue(after)),
                parse.GetValue(output)!.FullName,
                parse.GetValue(label) ?? DefaultLabel(parse.GetValue(size)!),
                [.. parse.UnmatchedTokens]);
            return new SoakRunner(settings).RunAsync(cancellationToken);
        });
        return command;
    }

    // "10GiB-jemalloc", "10GiB-glibc", "10GiB-glibc-arenas2": the size as given and the malloc in effect.
    private static string DefaultLabel(string size)
    {
        var arenas = Environment.GetEnvironmentVariable("MALLOC_ARENA_MAX");
        var malloc = RocksDbNative.JemallocIsProcessMalloc() ? "jemalloc"
            : string.IsNullOrEmpty(arenas) ? "glibc"
            : "glibc-arenas" + string.Concat(arenas.Where(char.IsAsciiDigit));
        return string.Concat(size.Where(c => char.IsAsciiLetterOrDigit(c) || c == '.')) + "-" + malloc.ToString(CultureInfo.InvariantCulture);
    }
}
