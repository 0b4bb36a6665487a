using Indexing.Engine;
using Indexing.Server.Cli;

// First, before the server's threads exist: one glibc malloc arena per core (the engine says why;
// MALLOC_ARENA_MAX in the environment overrides it).
IndexingEngine.LimitGlibcArenas(Environment.ProcessorCount);
return await CommandLine.InvokeAsync(args).ConfigureAwait(false);
