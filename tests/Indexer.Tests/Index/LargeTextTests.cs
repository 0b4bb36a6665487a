using System.Text;
using System.Text.Json;

namespace Indexing.Indexer.Tests.Index;

// A large value of an unstored text field reaches Lucene as UTF-8 through a reader, not as a string
// twice its size: extraction keeps it apart, unescaped, without allocating a string, and the index
// finds its words anywhere in it as it does for a string.
public sealed class LargeTextTests
{
    private const string DefinitionJson = """
        { "name": "notes", "collection": "notes", "fields": [
          { "name": "body", "path": "body", "type": "text" },
          { "name": "title", "path": "title", "type": "text", "stored": true },
          { "name": "kind", "path": "kind", "type": "keyword" }
        ] }
        """;

    private static readonly IndexDefinition _definition = IndexDefinition.Parse(DefinitionJson);

    // About 100 KB of text with escapes in JSON: a quote, a newline and a non-ASCII letter per line.
    private static readonly string _largeText = string.Concat(Enumerable.Repeat("caf\u00e9 \"quoted\" words\nline ", 4000)) + "needle";

    [Fact]
    public void Extract_ALargeUnstoredText_IsUnescapedUtf8_AndAllocatesNoString()
    {
        var extractor = new FieldExtractor(_definition);
        var buffer = extractor.CreateBuffer(streamLargeText: true);
        var document = JsonSerializer.SerializeToUtf8Bytes(new { body = _largeText, title = _largeText, kind = "long" });

        extractor.Extract(document, buffer);

        Assert.Equal(0, buffer.Count(0));
        Assert.Equal(1, buffer.LargeTextCount);
        Assert.Equal(0, buffer.LargeTextField(0));
        Assert.Equal(_largeText, Encoding.UTF8.GetString(buffer.LargeText(0).Span));
        // A stored text field needs its string (Lucene stores strings); small values stay strings.
        Assert.Equal(_largeText, buffer.Strings(1)[0]);
        Assert.Equal("long", buffer.Strings(2)[0]);

        // Once the pooled buffer is warm, extracting the large value allocates far less than its
        // string would (2 bytes a character).
        var bodyOnly = JsonSerializer.SerializeToUtf8Bytes(new { body = _largeText });
        extractor.Extract(bodyOnly, buffer);
        var before = GC.GetAllocatedBytesForCurrentThread();
        extractor.Extract(bodyOnly, buffer);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(allocated < _largeText.Length / 10, $"extracting allocated {allocated:N0} bytes; a string of the value is {2L * _largeText.Length:N0}");

        // A buffer that does not stream takes it as a string, as before.
        var strings = extractor.CreateBuffer();
        extractor.Extract(bodyOnly, strings);
        Assert.Equal(0, strings.LargeTextCount);
        Assert.Equal(_largeText, strings.Strings(0)[0]);
    }

    [Fact]
    public async Task Build_WithALargeText_FindsItsWordsAndPhrases_ToTheEnd()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var index = environment.OpenIndex(_definition);
        var documents = new List<PrefetchedDocument>
        {
            new("notes/large", 1, JsonSerializer.SerializeToUtf8Bytes(new { body = _largeText, kind = "large" })),
            new("notes/small", 2, JsonSerializer.SerializeToUtf8Bytes(new { body = "a small caf\u00e9 note", kind = "small" })),
        };

        await index.BuildAsync(new MemoryBatchSource(documents, snapshotEtag: 2)).WaitAsync(TimeSpan.FromSeconds(60));

        Assert.Equal(2, index.Query(new IndexQuery("body:caf\u00e9")).TotalHits);
        Assert.Equal("notes/large", Assert.Single(index.Query(new IndexQuery("body:needle")).Hits).Id);
        Assert.Equal("notes/large", Assert.Single(index.Query(new IndexQuery("body:\"words line caf\u00e9\"")).Hits).Id);
        Assert.Equal(0, index.Query(new IndexQuery("body:zebra")).TotalHits);
    }
}
