using Indexing.Server.Cli;

return await CommandLine.InvokeAsync(args).ConfigureAwait(false);
