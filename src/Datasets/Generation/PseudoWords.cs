using System.Text;

namespace Indexing.Datasets;

// Builds lists of pronounceable, made-up words from syllables (onset + vowel + optional coda),
// deterministic from a seeded Prng. No dictionary ships with the project: the words only need to
// look and tokenise like text. About 2% of vowels carry an accent, so bodies exercise multi-byte
// UTF-8 in validation and analysis. Every word is unique within its list and at most
// MaxWordBytes long; none contains a character JSON would need to escape.
internal static class PseudoWords
{
    public const int MaxWordBytes = 14;

    private const double AccentChance = 0.02;
    private const double LengthNoise = 4;

    private static readonly byte[][] _onsets = Utf8(
        "", "", "", "b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
        "br", "ch", "dr", "fr", "gl", "kr", "pl", "sh", "sk", "st", "th", "tr");

    private static readonly byte[][] _vowels = Utf8("a", "a", "e", "e", "i", "o", "o", "u", "ai", "ea", "ou", "ie");
    private static readonly byte[][] _accentedVowels = Utf8("é", "ö", "ü", "å");
    private static readonly byte[][] _codas = Utf8("", "", "", "", "", "n", "r", "l", "s", "m", "nd", "rt", "st", "k");

    // Weights of 1, 2, 3 and 4 syllables per word.
    public static ReadOnlySpan<double> TextSyllables => [0.15, 0.45, 0.30, 0.10];
    public static ReadOnlySpan<double> NameSyllables => [0, 0.55, 0.40, 0.05];

    // Builds count unique words, in generation order or (sortByLength) roughly shortest first.
    public static WordList Build(ref Prng rng, int count, ReadOnlySpan<double> syllableWeights, bool capitalize, bool sortByLength)
    {
        var blob = new List<byte>(count * 8);
        var bounds = new List<(int Start, int Length)>(count);
        var seen = new HashSet<ulong>(count);
        Span<byte> word = stackalloc byte[4 * 8];
        var attempts = 0;
        while (bounds.Count < count)
        {
            if (++attempts > count * 100)
            {
                throw new InvalidOperationException(
                    $"could not make {count} unique pseudo-words from the syllable inventory after {attempts - 1} attempts; lower the count.");
            }

            var length = Compose(ref rng, syllableWeights, word);
            if (length == 0 || length > MaxWordBytes || !seen.Add(Fnv1a(word[..length])))
            {
                continue;
            }

            if (capitalize && char.IsAsciiLetterLower((char)word[0]))
            {
                word[0] -= 'a' - 'A';
            }

            bounds.Add((blob.Count, length));
            foreach (var b in word[..length])
            {
                blob.Add(b);
            }
        }

        if (sortByLength)
        {
            // Rank by length plus up to LengthNoise bytes of noise: frequent words tend to be short,
            // as in real languages, without the few one-letter words taking all the top ranks.
            // List.Sort is unstable; the start offset breaks ties in generation order.
            var keys = new Dictionary<int, double>(count);
            foreach (var (start, length) in bounds)
            {
                keys[start] = length + (LengthNoise * rng.NextDouble());
            }

            bounds.Sort((x, y) => keys[x.Start] != keys[y.Start] ? keys[x.Start].CompareTo(keys[y.Start]) : x.Start.CompareTo(y.Start));
        }

        var sorted = new byte[blob.Count];
        var offsets = new int[count + 1];
        var source = System.Runtime.InteropServices.CollectionsMarshal.AsSpan(blob);
        var at = 0;
        for (var i = 0; i < count; i++)
        {
            offsets[i] = at;
            source.Slice(bounds[i].Start, bounds[i].Length).CopyTo(sorted.AsSpan(at));
            at += bounds[i].Length;
        }

        offsets[count] = at;
        return new WordList(sorted, offsets);
    }

    // Writes one word into destination (room for 4 syllables of at most 8 bytes); returns its length.
    private static int Compose(ref Prng rng, ReadOnlySpan<double> syllableWeights, Span<byte> destination)
    {
        var syllables = 1;
        var roll = rng.NextDouble();
        for (var i = 0; i < syllableWeights.Length - 1 && roll >= syllableWeights[i]; i++)
        {
            roll -= syllableWeights[i];
            syllables++;
        }

        var length = 0;
        for (var s = 0; s < syllables; s++)
        {
            length += Append(destination[length..], _onsets[rng.Next(_onsets.Length)]);
            var vowels = rng.Chance(AccentChance) ? _accentedVowels : _vowels;
            length += Append(destination[length..], vowels[rng.Next(vowels.Length)]);
            length += Append(destination[length..], _codas[rng.Next(_codas.Length)]);
        }

        return length;
    }

    private static int Append(Span<byte> destination, byte[] part)
    {
        part.CopyTo(destination);
        return part.Length;
    }

    // Stable across processes, unlike string.GetHashCode; a rare collision only skips a word.
    private static ulong Fnv1a(ReadOnlySpan<byte> bytes)
    {
        var hash = 0xCBF29CE484222325UL;
        foreach (var b in bytes)
        {
            hash = (hash ^ b) * 0x100000001B3UL;
        }

        return hash;
    }

    private static byte[][] Utf8(params string[] parts) => Array.ConvertAll(parts, Encoding.UTF8.GetBytes);
}
