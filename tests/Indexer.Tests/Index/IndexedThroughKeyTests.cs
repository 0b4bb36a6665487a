namespace Indexing.Indexer.Tests.Index;

public sealed class IndexedThroughKeyTests
{
    [Fact]
    public void Completed_OutOfOrder_KeyIsTheContiguousCompletedPrefix()
    {
        var key = new IndexedThroughKey(startAfter: null);
        var first = key.Taken("orders/10");
        var second = key.Taken("orders/20");
        var third = key.Taken("orders/30");

        key.Completed(third);
        key.Completed(second);
        Assert.Null(key.Through);
        Assert.Equal(0, key.CompletedBatches);

        key.Completed(first);
        Assert.Equal("orders/30", key.Through);
        Assert.Equal(3, key.CompletedBatches);
    }

    [Fact]
    public void Completed_BatchWithoutHandedOutThrough_LeavesTheKeyWhereItWas()
    {
        var key = new IndexedThroughKey(startAfter: "orders/05");
        Assert.Equal("orders/05", key.Through);
        key.Completed(key.Taken(null));
        Assert.Equal("orders/05", key.Through);
        key.Completed(key.Taken("orders/09"));
        Assert.Equal("orders/09", key.Through);
    }

    [Fact]
    public void Completed_Twice_Throws()
    {
        var key = new IndexedThroughKey(startAfter: null);
        var batch = key.Taken("orders/1");
        key.Completed(batch);
        Assert.Throws<InvalidOperationException>(() => key.Completed(batch));
        Assert.Throws<InvalidOperationException>(() => key.Completed(7));
    }
}
