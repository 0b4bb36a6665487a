using Indexing.Server.Cli;
using Indexing.Storage;

// First, before the server's threads exist: one glibc malloc arena per core (RocksDbNative says why;
// MALLOC_ARENA_MAX in the environment overrides it).
RocksDbNative.LimitGlibcArenas(Environment.ProcessorCount);
return await CommandLine.InvokeAsync(args).ConfigureAwait(false);
