using Indexing.Server.Cli;

return await CommandLine.Build().Parse(args).InvokeAsync().ConfigureAwait(false);
