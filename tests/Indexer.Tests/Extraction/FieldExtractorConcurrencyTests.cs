using System.Text;

using static Indexing.Indexer.Tests.Extracted;

namespace Indexing.Indexer.Tests;

public sealed class FieldExtractorConcurrencyTests
{
    [Fact]
    public async Task Extract_SharedExtractorOnSeveralThreads_GivesTheSingleThreadedResults()
    {
        var extractor = new FieldExtractor(Definition(
            Text("customer", "customer.name"), Keyword("product", "lines[].product"), Long("quantity", "lines[].quantity"),
            Double("price", "lines[].price"), Bool("paid", "paid")));
        var documents = Enumerable.Range(0, 50).Select(i => Encoding.UTF8.GetBytes($$"""
            { "customer": { "name": "customer {{i}}" }, "paid": {{(i % 2 == 0 ? "true" : "\"no\"")}},
              "lines": [ {{string.Join(", ", Enumerable.Range(0, i % 7).Select(j => $$"""{ "product": "p{{j}}", "quantity": {{i * j}}, "price": {{j}}.25 }"""))}} ] }
            """)).ToArray();
        var expected = documents.Select(document => Describe(extractor, extractor.CreateBuffer(), document)).ToArray();

        using var start = new Barrier(4);
        var threads = Enumerable.Range(0, 4).Select(t => Task.Factory.StartNew(() =>
        {
            var buffer = extractor.CreateBuffer();
            start.SignalAndWait();
            for (var round = 0; round < 40; round++)
            {
                // Each thread goes through the documents in its own order.
                for (var k = 0; k < documents.Length; k++)
                {
                    var i = (k * (2 * t + 1) + round) % documents.Length;
                    Assert.Equal(expected[i], Describe(extractor, buffer, documents[i]));
                }
            }
        }, TaskCreationOptions.LongRunning)).ToArray();

        await Task.WhenAll(threads);
        Assert.Contains("mismatches: 1", expected[1], StringComparison.Ordinal);
    }

    private static string Describe(FieldExtractor extractor, ExtractedFields buffer, byte[] document)
    {
        extractor.Extract(document, buffer);
        return buffer.Describe();
    }
}
