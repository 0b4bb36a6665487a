namespace Indexing.Prefetcher.Tests;

/// <summary>Starts any of the three strategies the same way, and drains one, for tests that hold for all.</summary>
internal static class Strategies
{
    public const string Adaptive = PrefetchStrategyNames.Adaptive;
    public const string FixedBatch = PrefetchStrategyNames.FixedBatch;
    public const string Sequential = PrefetchStrategyNames.Sequential;

    /// <summary>Documents per batch for the baselines in tests: small enough for several batches per run.</summary>
    public const int TestBatchDocuments = 256;

    /// <summary>No test run should come near this; it turns a hang into a failure.</summary>
    public static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    public static TheoryData<string> All => [Adaptive, FixedBatch, Sequential];

    /// <summary>The test name of a public strategy.</summary>
    public static string Name(PrefetchStrategy strategy) => strategy.ToName();

    /// <summary>The named strategy over <paramref name="source"/>; the baselines read <paramref name="batchDocuments"/> per batch.</summary>
    public static PrefetchPipeline Start(
        string strategy,
        IDocumentReadSource source,
        PrefetchOptions? options = null,
        int batchDocuments = TestBatchDocuments,
        CancellationToken cancellationToken = default) =>
        PrefetchPipeline.Start(
            PrefetchStrategyNames.Parse(strategy), source, (options ?? new PrefetchOptions()) with { BaselineBatchDocuments = batchDocuments }, cancellationToken);

    /// <summary>The adaptive strategy, as most pipeline tests use it.</summary>
    public static PrefetchPipeline StartAdaptive(IDocumentReadSource source, PrefetchOptions options, CancellationToken cancellationToken = default) =>
        PrefetchPipeline.Start(PrefetchStrategy.Adaptive, source, options, cancellationToken);

    /// <summary>The modelled network disk (default parameters unless given) in front of the test double.</summary>
    public static ModelledNetworkDiskSource OnModelledDisk(IDocumentReadSource source, NetworkDiskModelOptions? disk = null) =>
        new(source, new NetworkDiskModel(disk ?? new NetworkDiskModelOptions()));

    public static async Task<List<PrefetchedDocument>> DrainAsync(
        IBatchSource source, int maxDocuments = 512, long maxBytes = 4 * TestCollections.MiB)
    {
        var received = new List<PrefetchedDocument>();
        await foreach (var batch in source.ReadAllAsync(maxDocuments, maxBytes).WithCancellation(CancellationToken.None))
        {
            received.AddRange(batch.Documents);
        }

        return received;
    }

    public static Task<List<PrefetchedDocument>> DrainWithPatienceAsync(IBatchSource source, int maxDocuments = 512, long maxBytes = 4 * TestCollections.MiB) =>
        DrainAsync(source, maxDocuments, maxBytes).WaitAsync(Patience);

    /// <summary>Polls until <paramref name="condition"/> holds; fails the test after <see cref="Patience"/>.</summary>
    /// <param name="state">What the failure message adds: the state the condition was waiting on.</param>
    public static async Task EventuallyAsync(Func<bool> condition, string what, Func<string>? state = null)
    {
        var deadline = DateTime.UtcNow + Patience;
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Timed out waiting until {what}.{(state is null ? "" : $" {state()}")}");
            }

            await Task.Delay(5);
        }
    }
}

/// <summary>
/// Tests that compare timings or event order run on their own, not beside the rest of the suite:
/// on a two-core machine a parallel test generating tens of MB can starve a consumer for long
/// enough to blur what they measure.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class TimingSensitive
{
    public const string Name = "Timing-sensitive prefetch tests";
}
