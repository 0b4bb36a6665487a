namespace Indexing.Indexer.Tests.Index;

// How a build writes: a fresh build adds each document without a delete term (every id is new in a
// snapshot); a resumed build replaces by id, since documents after its key may already be in the
// commit it resumes from.
public sealed class BuildWriteModeTests
{
    private static readonly TimeSpan HangGuard = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Build_Fresh_AddsWithoutLookingForTheId()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = KeyedBatchSource.Documents(IndexTestEnvironment.Generate(50));
        // A source breaking its contract (one id twice) shows the write: an add, not a replace.
        var twice = documents.Append(documents[7] with { Etag = 51 }).ToList();
        var index = environment.OpenIndex();

        await index.BuildAsync(new MemoryBatchSource(twice, snapshotEtag: 60)).WaitAsync(HangGuard);

        Assert.Equal(2, index.Query(new IndexQuery($"__id:\"{documents[7].Id}\"")).TotalHits);
        Assert.Equal(51, index.GetStatus().DocumentCount);
    }
}
