using Indexing.Prefetcher;
using Indexing.Storage;

namespace Indexing.Indexer;

/// <summary>
/// The values of one index definition's fields, taken out of many documents ahead of indexing and
/// held: the input of the engine-alone bound (<see cref="LuceneOnlyBuild"/>), which then measures
/// the engine without the JSON walk. Each document's values are copied out of the reusable
/// extraction buffer into arrays of their own (the strings themselves are shared, not copied), so
/// holding them costs about twice the text's UTF-8 bytes in UTF-16 strings, plus small arrays.
/// <para>Immutable once made; read by any number of threads.</para>
/// </summary>
internal sealed class ExtractedDocuments
{
    private readonly Entry[] _entries;

    private ExtractedDocuments(IndexDefinition definition, Entry[] entries, long bytes, int failed)
    {
        Definition = definition;
        _entries = entries;
        Bytes = bytes;
        Failed = failed;
    }

    public IndexDefinition Definition { get; }

    /// <summary>Documents held (those of the definition's collection whose bodies could be read).</summary>
    public int Count => _entries.Length;

    /// <summary>Body bytes of the documents held.</summary>
    public long Bytes { get; }

    /// <summary>Documents of the collection left out because their body is not a JSON object (the build leaves them out too).</summary>
    public int Failed { get; }

    /// <summary>
    /// Extracts the definition's fields from every document of its collection in
    /// <paramref name="documents"/> (others are skipped), in order, on the calling thread.
    /// </summary>
    public static ExtractedDocuments Extract(IndexDefinition definition, IReadOnlyList<PrefetchedDocument> documents, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(definition);
        ArgumentNullException.ThrowIfNull(documents);
        var extractor = new FieldExtractor(definition);
        var buffer = extractor.CreateBuffer();
        var entries = new List<Entry>(documents.Count);
        long bytes = 0;
        var failed = 0;
        foreach (var document in documents)
        {
            cancellationToken.ThrowIfCancellationRequested();
            if (!DocumentIds.GetCollection(document.Id).SequenceEqual(definition.Collection))
            {
                continue;
            }

            try
            {
                extractor.Extract(document.Body.Span, buffer);
            }
            catch (InvalidDataException)
            {
                failed++;
                continue;
            }

            var columns = new Array?[definition.Fields.Length];
            for (var field = 0; field < columns.Length; field++)
            {
                if (buffer.Count(field) == 0)
                {
                    continue;
                }

                columns[field] = definition.Fields[field].Type switch
                {
                    IndexFieldType.Text or IndexFieldType.Keyword => buffer.Strings(field).ToArray(),
                    IndexFieldType.Long => buffer.Longs(field).ToArray(),
                    IndexFieldType.Double => buffer.Doubles(field).ToArray(),
                    _ => buffer.Bools(field).ToArray(),
                };
            }

            entries.Add(new Entry(document.Id, document.Etag, document.SizeBytes, columns));
            bytes += document.SizeBytes;
        }

        return new ExtractedDocuments(definition, [.. entries], bytes, failed);
    }

    internal string Id(int index) => _entries[index].Id;

    internal long Etag(int index) => _entries[index].Etag;

    internal long BodyBytes(int index) => _entries[index].BodyBytes;

    /// <summary>Puts document <paramref name="index"/>'s values back into an extraction buffer, as the extractor left them.</summary>
    internal void CopyTo(int index, ExtractedFields into)
    {
        into.Clear();
        var columns = _entries[index].Columns;
        for (var field = 0; field < columns.Length; field++)
        {
            switch (columns[field])
            {
                case string[] strings:
                    foreach (var value in strings)
                    {
                        into.Add(field, value);
                    }

                    break;
                case long[] longs:
                    foreach (var value in longs)
                    {
                        into.Add(field, value);
                    }

                    break;
                case double[] doubles:
                    foreach (var value in doubles)
                    {
                        into.Add(field, value);
                    }

                    break;
                case bool[] bools:
                    foreach (var value in bools)
                    {
                        into.Add(field, value);
                    }

                    break;
            }
        }
    }

    // One document: per definition field, its values (string[], long[], double[] or bool[]), or null for none.
    private readonly record struct Entry(string Id, long Etag, long BodyBytes, Array?[] Columns);
}
