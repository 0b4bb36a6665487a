using Indexing.Datasets;
using Indexing.Prefetcher;

namespace Indexing.Indexer.Tests.Index;

// A build from the prefetcher gives each batch's body arrays back once the batch is written, and
// the prefetcher reads later documents into them: every document must still be indexed with its own
// values, not those of a document read into its array afterwards.
public sealed class BuildLentBodiesTests
{
    [Fact]
    public async Task Build_FromThePrefetcherWithABudgetOfAFewBodies_IndexesEveryDocumentWithItsOwnValues()
    {
        using var environment = new IndexTestEnvironment();
        // Growing: 1-100 KiB, most of them in pooled arrays; a budget of 1 MiB is read into again and again.
        var documents = IndexTestEnvironment.Generate(300, DatasetShape.Growing);
        environment.Put(documents);
        var orders = GeneratedOrder.From(documents);
        var index = environment.OpenIndex(options: new IndexOptions { IndexingThreads = 2, TakeMaxDocuments = 8 });

        await using (var source = Prefetch.Start(
            environment.RequireStore, "orders", PrefetchStrategy.Adaptive, new PrefetchOptions { BudgetBytes = 1 << 20 }))
        {
            await index.BuildAsync(source).WaitAsync(TimeSpan.FromMinutes(2));
        }

        Assert.Equal(orders.Count, index.GetStatus().DocumentCount);
        foreach (var group in orders.GroupBy(order => order.ItemCount))
        {
            var hits = index.Query(new IndexQuery($"itemCount:{group.Key}") { Take = 1000 }).Hits.Select(hit => hit.Id);
            Assert.Equal(group.Select(order => order.Id).Order(StringComparer.Ordinal), hits.Order(StringComparer.Ordinal));
        }

        foreach (var group in orders.GroupBy(order => order.Status))
        {
            Assert.Equal(group.Count(), index.Query(new IndexQuery($"status:{group.Key}")).TotalHits);
        }
    }
}
