using System.Text.Json;

using Indexing.Datasets;

namespace Indexing.Indexer.Tests.Index;

// The values of generated orders as the tests expect the index to hold them, read independently
// of the extractor with JsonDocument.
internal sealed record GeneratedOrder(string Id, string Customer, string Status, long ItemCount, double Total, bool Paid, IReadOnlyList<string> Tags)
{
    public static List<GeneratedOrder> From(IEnumerable<GeneratedDocument> documents) =>
        [.. documents.Select(d =>
        {
            using var json = JsonDocument.Parse(d.Utf8Json);
            var root = json.RootElement;
            return new GeneratedOrder(
                d.Id,
                root.GetProperty("customer").GetProperty("name").GetString()!,
                root.GetProperty("status").GetString()!,
                root.GetProperty("itemCount").GetInt64(),
                root.GetProperty("total").GetDouble(),
                root.GetProperty("paid").GetBoolean(),
                [.. root.GetProperty("tags").EnumerateArray().Select(t => t.GetString()!)]);
        })];
}
