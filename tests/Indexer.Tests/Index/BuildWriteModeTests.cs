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

    [Fact]
    public async Task Build_UsesTheBuildRamBuffer_AndWritesNoCompoundFiles_ThenFollowsWithTheFollowingSettings()
    {
        using var environment = new IndexTestEnvironment();
        environment.Put(IndexTestEnvironment.Generate(200));
        DocumentIndex? index = null;
        var sawBuildBuffer = false;
        index = environment.OpenIndex(options: new IndexOptions
        {
            RamBufferSizeMB = 3,
            BuildRamBufferSizeMB = 40,
            BuildDocumentHook = _ => sawBuildBuffer |= index!.GetStatus().RamBufferSizeMB == 40,
        });
        Assert.Equal(3, index.GetStatus().RamBufferSizeMB);

        await using (var source = Prefetch.Start(environment.RequireStore, "orders", PrefetchStrategy.Sequential))
        {
            await index.BuildAsync(source).WaitAsync(HangGuard);
        }

        Assert.True(sawBuildBuffer, "the status did not show the build's RAM buffer during the build");
        Assert.Equal(3, index.GetStatus().RamBufferSizeMB);
        // The build's segment (its last commit flushed it) is not a compound file.
        Assert.Empty(Directory.GetFiles(environment.IndexDirectory(), "*.cfs"));

        // After the build the writer is back to compound files: a followed change's segment is one.
        environment.RequireStore.Put("orders/after-build", """{"status":"followed"}""");
        index.CatchUp(environment.RequireStore);
        index.Commit();
        Assert.NotEmpty(Directory.GetFiles(environment.IndexDirectory(), "*.cfs"));
        Assert.Equal(201, index.GetStatus().DocumentCount);
    }
}
