using System.Globalization;
using Indexing.Storage;

namespace Indexing.Measurement.Measure;

/// <summary>One collection's documents and body bytes.</summary>
internal sealed record CollectionCount(string Name, long Documents, long Bytes);

/// <summary>
/// The store's collections with their documents and bytes, from one metadata scan (no body is
/// read). Documents whose id has no '/' belong to no collection and are counted apart: no index can
/// cover them.
/// </summary>
internal sealed class CollectionCensus
{
    private CollectionCensus(IReadOnlyList<CollectionCount> collections, long withoutCollection)
    {
        Collections = collections;
        WithoutCollection = withoutCollection;
    }

    /// <summary>Collections by bytes, largest first (ties by name).</summary>
    public IReadOnlyList<CollectionCount> Collections { get; }

    /// <summary>Documents whose id names no collection.</summary>
    public long WithoutCollection { get; }

    /// <summary>Every document in the store.</summary>
    public long Documents => Collections.Sum(c => c.Documents) + WithoutCollection;

    /// <summary>The collection with the most bytes; null when no document has a collection.</summary>
    public CollectionCount? Largest => Collections.Count == 0 ? null : Collections[0];

    public static CollectionCensus Take(DocumentStore store, CancellationToken cancellationToken)
    {
        var counts = new Dictionary<string, (long Documents, long Bytes)>(StringComparer.Ordinal);
        long withoutCollection = 0;
        string? current = null;
        foreach (var document in store.ScanMetadata())
        {
            cancellationToken.ThrowIfCancellationRequested();
            var collection = DocumentIds.GetCollection(document.Id);
            if (collection.IsEmpty)
            {
                withoutCollection++;
                continue;
            }

            // Keys are sorted, so a collection's documents are consecutive: one string per collection.
            if (current is null || !collection.SequenceEqual(current))
            {
                current = collection.ToString();
            }

            var (documents, bytes) = counts.GetValueOrDefault(current);
            counts[current] = (documents + 1, bytes + document.SizeBytes);
        }

        var collections = counts
            .Select(c => new CollectionCount(c.Key, c.Value.Documents, c.Value.Bytes))
            .OrderByDescending(c => c.Bytes)
            .ThenBy(c => c.Name, StringComparer.Ordinal)
            .ToList();
        return new CollectionCensus(collections, withoutCollection);
    }

    public CollectionCount? Find(string name) => Collections.FirstOrDefault(c => c.Name == name);

    /// <summary>"orders (1,200 documents, 3.1 MiB), ..." for messages: the ten largest, and how many more.</summary>
    public string Describe()
    {
        if (Collections.Count == 0)
        {
            return "no collection";
        }

        var listed = string.Join(", ", Collections.Take(10).Select(c => string.Create(
            CultureInfo.InvariantCulture, $"{MessageText.Quote(c.Name)} ({c.Documents:N0} documents, {ByteSize.Format(c.Bytes)})")));
        return Collections.Count > 10 ? $"{listed} and {Collections.Count - 10:N0} more" : listed;
    }
}
