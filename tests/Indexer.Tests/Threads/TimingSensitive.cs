namespace Indexing.Indexer.Tests.Threads;

// Tests that compare timings run on their own, not beside the rest of the suite: on a two-core
// machine a parallel test can starve the threads they time.
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class TimingSensitive
{
    public const string Name = "Indexer timing-sensitive";
}
