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

        key.Completed(third, ["orders/21", "orders/30"]);
        key.Completed(second, ["orders/11", "orders/20"]);
        Assert.Null(key.Through);
        Assert.Equal(0, key.CompletedBatches);
        Assert.Equal((null, 0), key.Prefix());

        key.Completed(first, ["orders/01", "orders/10"]);
        Assert.Equal("orders/30", key.Through);
        Assert.Equal(3, key.CompletedBatches);
        Assert.Equal(("orders/30", 6), key.Prefix());
    }

    [Fact]
    public void Completed_BatchWithoutHandedOutThrough_LeavesTheKeyWhereItWas()
    {
        var key = new IndexedThroughKey(startAfter: "orders/05");
        Assert.Equal("orders/05", key.Through);
        key.Completed(key.Taken(null), []);
        Assert.Equal("orders/05", key.Through);
        key.Completed(key.Taken("orders/09"), ["orders/06", "orders/07", "orders/08", "orders/09"]);
        Assert.Equal(("orders/09", 4), key.Prefix());
        Assert.Equal("orders/09", key.Through);
    }

    [Fact]
    public void Completed_BatchesHoldingIdsAboveTheirKey_CountOnlyIdsAtOrBelowTheKey()
    {
        // Completion order, not key order: the first batch holds ids past its own key.
        var key = new IndexedThroughKey(startAfter: null);
        key.Completed(key.Taken("orders/02"), ["orders/01", "orders/02", "orders/05", "orders/06"]);
        Assert.Equal(("orders/02", 2), key.Prefix());
        key.Completed(key.Taken("orders/04"), ["orders/03", "orders/04"]);
        Assert.Equal(("orders/04", 4), key.Prefix());
        key.Completed(key.Taken("orders/08"), ["orders/07", "orders/08"]);
        Assert.Equal(("orders/08", 8), key.Prefix());
    }

    [Fact]
    public void Completed_Twice_Throws()
    {
        var key = new IndexedThroughKey(startAfter: null);
        var batch = key.Taken("orders/1");
        key.Completed(batch, ["orders/1"]);
        Assert.Throws<InvalidOperationException>(() => key.Completed(batch, ["orders/1"]));
        Assert.Throws<InvalidOperationException>(() => key.Completed(7, []));
    }
}
