using System.Text.Json;

namespace Indexing.Indexer.Tests.SideBySide;

// A real process deletes an index while a rebuild of it runs, and is killed (SIGKILL) at each
// delete point. After each kill, reopening must find either the whole index (before the catalog
// write: it serves every document and verifies clean) or nothing of it (from the catalog write on:
// not listed, no directory left after the open), and the name can be defined again from generation 1.
[Trait("Category", "Crash")]
public sealed class DeleteCrashTests
{
    private const int Documents = 300;
    private static readonly IndexQuery _all = new("*:*") { Take = 1 };

    public static TheoryData<string> Points() => [.. Enum.GetNames<DeletePoint>()];

    [Theory]
    [MemberData(nameof(Points))]
    public async Task KilledAtPoint_ReopenFindsTheWholeIndexOrNothing(string pointName)
    {
        var point = Enum.Parse<DeletePoint>(pointName);
        using var env = new ManagerEnvironment(documents: Documents);
        var definitionFile = await env.BuildV1ForTheCrashHostAsync();

        await CrashHostProcess.RunUntilKilledAsync(["delete", env.StoreDirectory, env.IndexRoot, pointName, definitionFile], $"AT {pointName}");

        env.ReopenStoreAfterClose();
        var manager = env.OpenManager();
        if (point < DeletePoint.CatalogWritten)
        {
            // Not deleted: the whole index serves; the cancelled replacement is gone.
            Assert.Equal(["orders"], manager.Names);
            Assert.Equal(Documents, manager.Query("orders", _all).TotalHits);
            if (manager.GetRebuild("orders") is not null)
            {
                Assert.Equal(RebuildPhase.Done, (await ManagerEnvironment.WaitForRebuildAsync(manager, "orders")).Phase);
            }

            var report = manager.Verify("orders");
            Assert.True(report.IsConsistent, report.ToString());
            Assert.Equal([$"g{manager.GetSummary("orders").Generation:D6}"], env.GenerationDirectories("orders"));
            return;
        }

        // Deleted: nothing of it is left once the open cleaned up.
        Assert.Empty(manager.Names);
        Assert.False(Directory.Exists(Path.Combine(env.IndexRoot, "orders")), $"killed at {pointName}: the index directory is still there after the open");
        using (var catalog = JsonDocument.Parse(File.ReadAllBytes(Path.Combine(env.IndexRoot, "catalog.json"))))
        {
            Assert.False(catalog.RootElement.GetProperty("indexes").TryGetProperty("orders", out _));
        }

        Assert.Throws<IndexNotFoundException>(() => manager.Query("orders", _all));
        Assert.Equal(IndexPutResult.Created, manager.CreateOrUpdate(ManagerEnvironment.V1));
        await ManagerEnvironment.WaitForRebuildAsync(manager, "orders");
        Assert.Equal(1, manager.GetSummary("orders").Generation);
        Assert.Equal(Documents, manager.Query("orders", _all).TotalHits);
    }
}
