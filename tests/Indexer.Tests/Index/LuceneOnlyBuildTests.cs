using Indexing.Prefetcher;

using Lucene.Net.Index;
using Lucene.Net.Store;

namespace Indexing.Indexer.Tests.Index;

/// <summary>
/// The LuceneOnly bound's two halves: values extracted ahead of indexing come back exactly as the
/// extractor gives them (so the bound indexes what a build would), and the bound adds every
/// document of its collection once, with any number of threads, into a fresh index; it refuses a
/// directory that holds one.
/// </summary>
public sealed class LuceneOnlyBuildTests
{
    [Fact]
    public void Extract_EveryFieldType_CopyToGivesTheExtractorsValues()
    {
        var documents = Prefetched(IndexTestEnvironment.Generate(30));
        var extractor = new FieldExtractor(IndexTestEnvironment.Orders);
        var expected = extractor.CreateBuffer();
        var actual = extractor.CreateBuffer();

        var extracted = ExtractedDocuments.Extract(IndexTestEnvironment.Orders, documents);

        Assert.Equal(documents.Count, extracted.Count);
        Assert.Equal(documents.Sum(d => d.SizeBytes), extracted.Bytes);
        for (var d = 0; d < documents.Count; d++)
        {
            extractor.Extract(documents[d].Body.Span, expected);
            extracted.CopyTo(d, actual);
            Assert.Equal(documents[d].Id, extracted.Id(d));
            Assert.Equal(documents[d].Etag, extracted.Etag(d));
            for (var field = 0; field < IndexTestEnvironment.Orders.Fields.Length; field++)
            {
                Assert.Equal(expected.Count(field), actual.Count(field));
                switch (IndexTestEnvironment.Orders.Fields[field].Type)
                {
                    case IndexFieldType.Text or IndexFieldType.Keyword:
                        Assert.Equal(expected.Strings(field).ToArray(), actual.Strings(field).ToArray());
                        break;
                    case IndexFieldType.Long:
                        Assert.Equal(expected.Longs(field).ToArray(), actual.Longs(field).ToArray());
                        break;
                    case IndexFieldType.Double:
                        Assert.Equal(expected.Doubles(field).ToArray(), actual.Doubles(field).ToArray());
                        break;
                    default:
                        Assert.Equal(expected.Bools(field).ToArray(), actual.Bools(field).ToArray());
                        break;
                }
            }
        }
    }

    [Fact]
    public void Extract_OtherCollectionsAndBadBodies_AreLeftOutAndTheBadOnesCounted()
    {
        var documents = Prefetched(IndexTestEnvironment.Generate(3));
        documents.Add(new PrefetchedDocument("customers/1", 90, IndexTestEnvironment.Json("""{"name": "x"}""")));
        documents.Add(new PrefetchedDocument("orders/bad", 91, IndexTestEnvironment.Json("[1, 2]")));

        var extracted = ExtractedDocuments.Extract(IndexTestEnvironment.Orders, documents);

        Assert.Equal(3, extracted.Count);
        Assert.Equal(1, extracted.Failed);
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public async Task AddAsync_Threads_AddsEveryDocumentOnceIntoAFreshIndex(int threads)
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var documents = Prefetched(IndexTestEnvironment.Generate(200));
        var options = new IndexOptions { IndexingThreads = threads, TakeMaxDocuments = 16 };
        var extracted = ExtractedDocuments.Extract(IndexTestEnvironment.Orders, documents);
        var path = environment.IndexDirectory("lucene-only");

        using (var build = LuceneOnlyBuild.Open(path, IndexTestEnvironment.Orders, options))
        {
            await build.AddAsync(extracted).WaitAsync(TimeSpan.FromMinutes(2));
            build.Commit();
            Assert.Equal(200, build.Documents);
            Assert.Equal(extracted.Bytes, build.Bytes);
            Assert.Equal(0, build.Refused);
        }

        using var directory = FSDirectory.Open(new DirectoryInfo(path));
        using var reader = DirectoryReader.Open(directory);
        Assert.Equal(200, reader.NumDocs);
        var ids = new HashSet<string>();
        for (var d = 0; d < reader.MaxDoc; d++)
        {
            Assert.True(ids.Add(reader.Document(d).Get(IndexFieldNames.Id)));
        }

        Assert.Equal(documents.Select(d => d.Id).ToHashSet(), ids);
    }

    [Fact]
    public async Task Open_ADirectoryHoldingAnIndex_IsRefusedNamingIt()
    {
        using var environment = new IndexTestEnvironment(withStore: false);
        var path = environment.IndexDirectory("lucene-only");
        using (var build = LuceneOnlyBuild.Open(path, IndexTestEnvironment.Orders, new IndexOptions()))
        {
            await build.AddAsync(ExtractedDocuments.Extract(IndexTestEnvironment.Orders, Prefetched(IndexTestEnvironment.Generate(2))));
            build.Commit();
        }

        var error = Assert.Throws<InvalidOperationException>(() => LuceneOnlyBuild.Open(path, IndexTestEnvironment.Orders, new IndexOptions()));

        Assert.Contains("already holds an index", error.Message, StringComparison.Ordinal);
        Assert.Contains("lucene-only", error.Message, StringComparison.Ordinal);
    }

    private static List<PrefetchedDocument> Prefetched(IEnumerable<Datasets.GeneratedDocument> documents)
    {
        var etag = 0L;
        return [.. documents.Select(d => new PrefetchedDocument(d.Id, ++etag, d.Utf8Json))];
    }
}
