using System.Globalization;
using System.Text;

using Lucene.Net.Analysis.Standard;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;

using Directory = Lucene.Net.Store.Directory;

namespace Indexing.Indexer.Tests.Index;

// Long and double fields are written at LuceneDocumentMapper.NumericPrecisionStep (16); indexes
// written before that used Lucene 4.8's default step of 4. The query parser's ranges must find
// exactly the matching documents in both.
public sealed class NumericPrecisionTests
{
    private static readonly IndexDefinition _definition = IndexDefinition.Parse("""
        { "name": "numbers", "collection": "items", "fields": [
          { "name": "n", "path": "n", "type": "long" },
          { "name": "x", "path": "x", "type": "double" }
        ] }
        """);

    private static readonly (long N, double X)[] _values = Values();

    [Fact]
    public void Ranges_OnIndexesWrittenAtTheNewAndTheOldPrecisionStep_FindExactlyTheMatchingDocuments()
    {
        using var current = WriteWithTheMapper();
        using var older = WriteAtLuceneDefaultStep();
        var random = new Random(5);
        var queries = new List<(string Text, Func<long, double, bool> Matches)>
        {
            ("n:[* TO *]", (_, _) => true),
            // Quoted: a bare value may start with '-', the classic syntax's NOT.
            ($"n:\"{_values[17].N}\"", (n, _) => n == _values[17].N),
            ($"x:\"{_values[23].X.ToString("R", CultureInfo.InvariantCulture)}\"", (_, x) => x == _values[23].X),
            ("n:0", (n, _) => n == 0),
            ("n:[* TO 0}", (n, _) => n < 0),
            ("x:[0 TO *]", (_, x) => x >= 0),
        };
        for (var i = 0; i < 40; i++)
        {
            var (a, b) = Ordered(_values[random.Next(_values.Length)].N + random.Next(-3, 4), _values[random.Next(_values.Length)].N);
            var (c, d) = Ordered(_values[random.Next(_values.Length)].X, (random.NextDouble() - 0.5) * 2e9);
            var lowerOpen = i % 2 == 0;
            var upperOpen = i % 3 == 0;
            queries.Add(($"n:{(lowerOpen ? "{" : "[")}{a} TO {b}{(upperOpen ? "}" : "]")}", (n, _) => (lowerOpen ? n > a : n >= a) && (upperOpen ? n < b : n <= b)));
            var cText = c.ToString("R", CultureInfo.InvariantCulture);
            var dText = d.ToString("R", CultureInfo.InvariantCulture);
            queries.Add(($"x:[{cText} TO {dText}]", (_, x) => x >= c && x <= d));
        }

        foreach (var (text, matches) in queries)
        {
            var expected = _values.Count(v => matches(v.N, v.X));
            Assert.True(expected == Hits(current, text), $"{text}: expected {expected} hits at step {LuceneDocumentMapper.NumericPrecisionStep}, found {Hits(current, text)}");
            Assert.True(expected == Hits(older, text), $"{text}: expected {expected} hits at step 4, found {Hits(older, text)}");
        }

        // The point of the new step: a quarter of the trie terms per value.
        Assert.InRange(Terms(current, "n"), _values.Length, 4 * _values.Length);
        Assert.InRange(Terms(older, "n"), 8 * _values.Length, 16 * _values.Length);
    }

    private static (long, long) Ordered(long a, long b) => a <= b ? (a, b) : (b, a);

    private static (double, double) Ordered(double a, double b) => a <= b ? (a, b) : (b, a);

    private static (long N, double X)[] Values()
    {
        var random = new Random(11);
        var values = new List<(long, double)> { (0, 0), (-1, -0.5), (long.MaxValue, double.MaxValue), (long.MinValue + 1, double.MinValue) };
        while (values.Count < 400)
        {
            // Clustered and spread values: near neighbours share the trie's coarse terms, far ones do not.
            var n = random.Next(3) switch
            {
                0 => random.NextInt64(-1000, 1000),
                1 => random.NextInt64(-5_000_000_000, 5_000_000_000),
                _ => random.NextInt64(long.MinValue / 2, long.MaxValue / 2),
            };
            values.Add((n, (random.NextDouble() - 0.5) * Math.Pow(10, random.Next(-3, 10))));
        }

        return [.. values];
    }

    private static Directory WriteWithTheMapper()
    {
        var directory = new RAMDirectory();
        var extractor = new FieldExtractor(_definition);
        var buffer = extractor.CreateBuffer();
        var mapper = new LuceneDocumentMapper(_definition);
        using var writer = Writer(directory);
        for (var i = 0; i < _values.Length; i++)
        {
            var json = string.Create(CultureInfo.InvariantCulture, $$"""{"n": {{_values[i].N}}, "x": {{_values[i].X:R}}}""");
            extractor.Extract(Encoding.UTF8.GetBytes(json), buffer);
            writer.AddDocument(mapper.Map($"items/{i}", i + 1, buffer));
        }

        writer.Commit();
        return directory;
    }

    // As every index was written before the step was set: Lucene 4.8's default for both types.
    private static Directory WriteAtLuceneDefaultStep()
    {
        var directory = new RAMDirectory();
        using var writer = Writer(directory);
        foreach (var (n, x) in _values)
        {
            writer.AddDocument(new Document { new Int64Field("n", n, Field.Store.NO), new DoubleField("x", x, Field.Store.NO) });
        }

        writer.Commit();
        return directory;
    }

    private static IndexWriter Writer(Directory directory) =>
        new(directory, new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48)));

    private static int Hits(Directory directory, string text)
    {
        using var reader = DirectoryReader.Open(directory);
        var query = new IndexQuery(text);
        var parsed = DefinitionQueryParser.Parse(_definition, new QueryFields(_definition), query, new StandardAnalyzer(LuceneVersion.LUCENE_48), new QueryBudget(_definition.Name, query, CancellationToken.None));
        return new IndexSearcher(reader).Search(parsed, 1).TotalHits;
    }

    private static long Terms(Directory directory, string field)
    {
        using var reader = DirectoryReader.Open(directory);
        var terms = MultiFields.GetTerms(reader, field).GetEnumerator();
        var count = 0L;
        while (terms.MoveNext())
        {
            count++;
        }

        return count;
    }
}
