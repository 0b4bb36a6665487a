using System.CommandLine;
using Indexing.Server.Hosting;

namespace Indexing.Server.Cli;

// The command tree: `demo` (the main job), `serve` (the HTTP API) and `measure` (a rebuild on the user's own file). Each command's options and action live in its own file.
internal static class CommandLine
{
    /// <summary>
    /// How long a command may take to stop after Ctrl+C or SIGTERM before System.CommandLine ends the
    /// process anyway (exit 130, or 143 for SIGTERM). Its default, 2 s, cut a graceful stop short:
    /// requests in progress, index commits and the store's close. This is the server's shutdown
    /// timeout for requests plus time to close the indexes and the store after them.
    /// </summary>
    public static readonly TimeSpan StopGrace = ServerHost.ShutdownTimeout + TimeSpan.FromSeconds(15);

    /// <summary>Parses <paramref name="args"/> and runs the command, with Ctrl+C and SIGTERM cancelling it gracefully.</summary>
    public static Task<int> InvokeAsync(string[] args) =>
        Build().Parse(args).InvokeAsync(new InvocationConfiguration { ProcessTerminationTimeout = StopGrace });

    /// <summary>
    /// Sets <paramref name="action"/> as <paramref name="command"/>'s action, cancellable by Ctrl+C and
    /// SIGTERM from its start. System.CommandLine registers its signal handler only once the action has
    /// returned its task, that is at the action's first await that does not complete at once; until
    /// then a signal takes its default course and kills the process. The commands do long synchronous
    /// work first (starting the server, loading the dataset or the input file), so the action yields
    /// before anything else.
    /// </summary>
    public static void SetCancellableAction(Command command, Func<ParseResult, CancellationToken, Task<int>> action) =>
        command.SetAction(async (parse, cancellationToken) =>
        {
            await Task.Yield();
            return await action(parse, cancellationToken).ConfigureAwait(false);
        });

    public static RootCommand Build()
    {
        var root = new RootCommand(
            "Document database indexing pipeline: documents in RocksDB, an adaptive prefetcher reading them " +
            "for index rebuilds at the speed of the hardware.");
        root.Subcommands.Add(DemoCommand.Create());
        root.Subcommands.Add(ServeCommand.Create());
        root.Subcommands.Add(MeasureCommand.Create());
        root.Subcommands.Add(ClusterCommand.Create());
        return root;
    }
}
