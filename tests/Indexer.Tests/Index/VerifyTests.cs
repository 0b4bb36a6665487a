namespace Indexing.Indexer.Tests.Index;

public sealed class VerifyTests
{
    [Fact]
    public void Verify_StoreChangedSinceTheIndexCaughtUp_ReportsMissingExtraAndStaleUntilCaughtUp()
    {
        using var environment = new IndexTestEnvironment();
        var store = environment.RequireStore;
        environment.Put(IndexTestEnvironment.Generate(30));
        var index = environment.OpenIndex();
        index.CatchUp(store);
        Assert.True(index.Verify(store).IsConsistent);

        store.Put("orders/zz-new", """{"status":"new"}""");
        store.Delete("orders/00000003");
        store.Put("orders/00000005", """{"status":"changed"}""");
        var before = index.Verify(store);

        Assert.False(before.IsConsistent);
        Assert.Equal(30, before.StoreDocuments);
        Assert.Equal((1, 1, 1, 0), (before.Missing, before.Extra, before.Stale, before.Duplicates));
        Assert.Equal(["orders/zz-new"], before.MissingIds);
        Assert.Equal(["orders/00000003"], before.ExtraIds);
        Assert.StartsWith("orders/00000005 (index 5, store ", Assert.Single(before.StaleEntries), StringComparison.Ordinal);

        index.CatchUp(store);
        Assert.True(index.Verify(store).IsConsistent);
    }
}
