using Indexing.Cluster;

namespace Indexing.Cluster.Tests;

public sealed class BucketHashTests
{
    [Fact]
    public void Of_TheSameId_IsTheSameBucket_AndIdsSpreadOverEveryBucket()
    {
        var counts = new int[16];
        for (var i = 0; i < 16_000; i++)
        {
            var id = $"orders/{i}";
            var bucket = BucketHash.Of(id, counts.Length);
            Assert.Equal(bucket, BucketHash.Of(id, counts.Length));
            counts[bucket]++;
        }

        // 1,000 per bucket expected; a uniform hash stays well within ±20%.
        Assert.All(counts, count => Assert.InRange(count, 800, 1200));
    }

    [Fact]
    public void Of_IsAFixedFunction_NotThisProcesssStringHash()
    {
        // XxHash3 of "orders/1" is fixed by its specification; a change here moves every document.
        Assert.Equal(BucketHash.Of("orders/1", 1 << 30), BucketHash.Of("orders/1", 1 << 30));
        Assert.Equal((int)(System.IO.Hashing.XxHash3.HashToUInt64("orders/1"u8) % 64), BucketHash.Of("orders/1", 64));
    }
}
