extern alias server;

using Indexing.Lab.Soak;
using server::Indexing.Server.Cli;
using Indexing.Storage;

// First, before the server's threads exist: one glibc malloc arena per core, as the product's
// executable starts (RocksDbNative says why; MALLOC_ARENA_MAX in the environment overrides it).
RocksDbNative.LimitGlibcArenas(Environment.ProcessorCount);
return await SoakCommand.Create().Parse(args)
    .InvokeAsync(new System.CommandLine.InvocationConfiguration { ProcessTerminationTimeout = CommandLine.StopGrace })
    .ConfigureAwait(false);
