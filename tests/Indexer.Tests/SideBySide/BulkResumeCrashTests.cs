using Indexing.Storage;

using Xunit.Abstractions;

namespace Indexing.Indexer.Tests.SideBySide;

// A real process runs a rebuild's bulk phase while a writer puts and deletes documents, and is
// killed (SIGKILL) part-way, after at least one bulk commit. The restart resumes the bulk phase after
// the key of the replacement's last commit: it reads only the ids after that key (each once), the
// rebuild finishes, and verify finds the index equal to the store.
[Trait("Category", "Crash")]
public sealed class BulkResumeCrashTests(ITestOutputHelper log)
{
    private const int Documents = 1200;

    [Theory]
    [InlineData(30)]
    [InlineData(60)]
    [InlineData(90)]
    public async Task KilledMidBulk_WithAWriter_RestartReadsOnlyAfterTheKey_AndVerifyIsClean(int percent)
    {
        using var env = new ManagerEnvironment(documents: Documents);
        var definitionFile = await env.BuildV1ForTheCrashHostAsync();

        var output = await CrashHostProcess.RunUntilKilledAsync(
            ["bulk", env.StoreDirectory, env.IndexRoot, definitionFile, percent.ToString(System.Globalization.CultureInfo.InvariantCulture)],
            $"AT bulk {percent}%");

        env.ReopenStoreAfterClose();
        var written = RebuildCrashTests.WrittenState.Check(env, output);
        Assert.True(written.Acknowledged > 0, "the writer acknowledged no write before the kill");
        var checkpoint = LuceneIndexSink.ReadLastCommit(Path.Combine(env.IndexRoot, "orders", "g000002"));
        Assert.NotNull(checkpoint);
        var snapshotEtag = Assert.NotNull(checkpoint.Value.BuildSnapshotEtag);
        var key = Assert.IsType<string>(checkpoint.Value.BuildIndexedThrough);
        var live = env.Store.ScanMetadata("orders").Select(m => m.Id).ToList();
        var liveAfterKey = live.Count(id => DocumentIds.CompareKeyOrder(id, key) > 0);
        log.WriteLine($"killed at {percent}%: key {key}, snapshot etag {snapshotEtag}, {written.Acknowledged} acknowledged writes, {liveAfterKey} of {live.Count} live documents after the key");

        var sources = new CountingBulkSources(ManagerEnvironment.AdaptiveSource);
        var manager = env.OpenManager(bulkSources: sources.Start);
        Assert.Equal(Documents, manager.Query("orders", new IndexQuery("*:* -status:written") { Take = 1 }).TotalHits);
        var resumed = await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");

        Assert.Equal(RebuildPhase.Done, resumed.Phase);
        Assert.Equal(key, Assert.Single(sources.Requests).StartAfterId);
        Assert.Equal(key, resumed.ResumedAfter);
        Assert.Equal(snapshotEtag, resumed.SnapshotEtag);
        Assert.True(resumed.DocumentsSkipped > 0, $"nothing skipped though the key is {key}");
        // The restart read the documents after the key, each once, and nothing before it.
        Assert.All(sources.Read, id => Assert.True(DocumentIds.CompareKeyOrder(id, key) > 0, $"{id} is not after the key {key}"));
        Assert.Equal(liveAfterKey, sources.Read.Count);
        Assert.Equal(liveAfterKey, sources.Read.Distinct().Count());
        Assert.True(liveAfterKey < live.Count, $"the restart read all {live.Count} documents");

        Assert.Equal(2, manager.GetSummary("orders").Generation);
        Assert.Equal(["g000002"], env.GenerationDirectories("orders"));
        var report = manager.Verify("orders");
        Assert.True(report.IsConsistent, report.ToString());
        Assert.Equal(env.LiveDocuments(), report.IndexDocuments);
        Assert.Equal(Documents + written.Live, report.IndexDocuments);
    }
}
