using System.Text.Json;

namespace Indexing.Datasets.Tests;

public sealed class ProseTests
{
    [Fact]
    public void Descriptions_WordFrequencies_FollowZipf()
    {
        var counts = new Dictionary<string, int>(StringComparer.Ordinal);
        long words = 0;
        foreach (var document in DatasetGenerator.Generate(new DatasetSpec(DatasetShape.Uniform, documentCount: 2000, seed: 13)))
        {
            var root = JsonDocument.Parse(document.Utf8Json).RootElement;
            foreach (var field in (string[])["description", "notes"])
            {
                foreach (var token in root.GetProperty(field).GetString()!.Split(' ', StringSplitOptions.RemoveEmptyEntries))
                {
                    var word = token.TrimEnd('.', ',', '?', '!').ToLowerInvariant();
                    if (word.Length > 0 && !char.IsAsciiDigit(word[0]))
                    {
                        counts[word] = counts.GetValueOrDefault(word) + 1;
                        words++;
                    }
                }
            }
        }

        var ranked = counts.Values.OrderDescending().ToArray();
        Assert.True(words > 500_000, $"only {words} words sampled");
        // Zipf with s = 1: rank 1 is about 100^s = 100 times rank 100.
        Assert.InRange(ranked[0] / (double)ranked[99], 40, 250);
        Assert.True(counts.Count > 10_000, $"only {counts.Count} distinct words");
    }

    [Fact]
    public void Fill_AnyLength_FillsExactlyWithPlainText()
    {
        var rng = Prng.For(1, PrngStream.Vocabulary, 0);
        var prose = new ProseWriter(ref rng);
        var content = Prng.For(1, PrngStream.Content, 0);

        for (var length = 0; length <= 300; length++)
        {
            var text = new byte[length + 2];
            text[^2] = 0xAA;
            text[^1] = 0xAA;
            prose.Fill(text.AsSpan(0, length), ref content);

            Assert.Equal([0xAA, 0xAA], text[^2..]);
            var value = System.Text.Encoding.UTF8.GetString(text, 0, length);
            Assert.Equal(length, System.Text.Encoding.UTF8.GetByteCount(value));
            Assert.DoesNotContain(value, c => c is '"' or '\\' || char.IsControl(c) || c == '\uFFFD');
            Assert.False(value.StartsWith(' ') || value.Contains("  ", StringComparison.Ordinal), $"odd spacing in '{value}'");
        }
    }

    [Fact]
    public void Vocabulary_Words_UniqueAndBounded()
    {
        var rng = Prng.For(3, PrngStream.Vocabulary, 0);

        var words = PseudoWords.Build(ref rng, 5000, PseudoWords.TextSyllables, capitalize: false, sortByLength: true);

        var texts = Enumerable.Range(0, words.Count).Select(i => System.Text.Encoding.UTF8.GetString(words[i])).ToList();
        Assert.Equal(5000, texts.Distinct(StringComparer.Ordinal).Count());
        Assert.All(texts, w => Assert.InRange(System.Text.Encoding.UTF8.GetByteCount(w), 1, PseudoWords.MaxWordBytes));
        Assert.Contains(texts, w => w.Any(c => c > 127));
        // Frequent (low-rank) words are shorter on average than rare ones.
        Assert.True(texts.Take(500).Average(w => w.Length) < texts.TakeLast(500).Average(w => w.Length));
    }
}
