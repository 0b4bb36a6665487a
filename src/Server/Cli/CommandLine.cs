using System.CommandLine;

namespace Indexing.Server.Cli;

// The command tree: `demo` (the main job), `serve` (the HTTP API) and `measure` (a rebuild on the user's own file). Each command's options and action live in its own file.
internal static class CommandLine
{
    public static RootCommand Build()
    {
        var root = new RootCommand(
            "Document database indexing pipeline: documents in RocksDB, an adaptive prefetcher reading them " +
            "for index rebuilds at the speed of the hardware.");
        root.Subcommands.Add(DemoCommand.Create());
        root.Subcommands.Add(ServeCommand.Create());
        root.Subcommands.Add(MeasureCommand.Create());
        return root;
    }
}
