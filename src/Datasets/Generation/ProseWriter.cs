using System.Globalization;
using System.Text;

namespace Indexing.Datasets;

// Fills a byte span exactly with sentence-like text: words drawn from a generated vocabulary with
// Zipf frequencies (rank r with probability proportional to 1/r^ZipfExponent), a few numbers,
// commas, and sentences of 5 to 20 words ending in '.', '?' or '!'. The text is what the analyzer
// of a full-text index will chew on, so its statistics matter more than its meaning.
//
// "Exactly" is the point: a document's size is planned first and the text pads it to the byte.
// The main loop stops while a few bytes are left, and the last sentence then ends with one or
// two words of exactly fitting length. The output never contains '"', '\' or control characters,
// so it can be placed inside a JSON string without escaping.
internal sealed class ProseWriter
{
    public const int VocabularySize = 20_000;
    public const double ZipfExponent = 1.0;

    private const int MinSentenceWords = 5;
    private const int MaxSentenceWords = 20;

    // Chances out of 65,536, so one random draw decides both for a word (the text is ~90% of all bytes).
    private const uint CommaChance = 5243;   // 8%
    private const uint NumberChance = 1311;  // 2%
    private const int MaxNumber = 9999;

    // The most one loop step writes: a space, a word (or a 4-digit number), and a punctuation mark.
    private const int MaxStepBytes = 1 + PseudoWords.MaxWordBytes + 1;

    private readonly WordList _words;
    private readonly ZipfTable _ranks;
    private readonly WordList _tailWords;

    public ProseWriter(ref Prng rng)
    {
        _words = PseudoWords.Build(ref rng, VocabularySize, PseudoWords.TextSyllables, capitalize: false, sortByLength: true);
        _ranks = new ZipfTable(VocabularySize, ZipfExponent);
        _tailWords = TailWords(_words);
    }

    public void Fill(Span<byte> text, ref Prng rng)
    {
        var at = 0;
        var wordsLeft = 0;
        while (text.Length - at > MaxStepBytes + 2)
        {
            var sentenceStart = wordsLeft == 0;
            if (sentenceStart)
            {
                wordsLeft = rng.Next(MinSentenceWords, MaxSentenceWords);
            }

            if (at > 0)
            {
                text[at++] = (byte)' ';
            }

            var start = at;
            var decoration = rng.NextUInt64();
            if ((decoration & 0xFFFF) < NumberChance)
            {
                rng.Next(1, MaxNumber).TryFormat(text[at..], out var digits, default, CultureInfo.InvariantCulture);
                at += digits;
            }
            else
            {
                var word = _words[_ranks.Sample(ref rng)];
                word.CopyTo(text[at..]);
                at += word.Length;
            }

            if (sentenceStart && char.IsAsciiLetterLower((char)text[start]))
            {
                text[start] -= 'a' - 'A';
            }

            if (--wordsLeft == 0)
            {
                text[at++] = SentenceEnd(ref rng);
            }
            else if (((decoration >> 16) & 0xFFFF) < CommaChance)
            {
                text[at++] = (byte)',';
            }
        }

        FinishSentence(text[at..], separate: at > 0);
    }

    // Ends the text with one or two words of exactly fitting length and a period. After the main
    // loop 3 to MaxStepBytes + 2 bytes are left (space, 1 to 16 bytes of words, '.'); only a text
    // shorter than that starts here with no word before it.
    private void FinishSentence(Span<byte> tail, bool separate)
    {
        if (tail.IsEmpty)
        {
            return;
        }

        if (separate)
        {
            tail[0] = (byte)' ';
            tail = tail[1..];
        }

        if (tail.Length == 1)
        {
            // Only a one-byte text gets here: a one-letter word, since a lone '.' is not text.
            _tailWords[0].CopyTo(tail);
            return;
        }

        var words = tail[..^1];
        if (words.Length <= PseudoWords.MaxWordBytes)
        {
            _tailWords[words.Length - 1].CopyTo(words);
        }
        else
        {
            var first = (words.Length - 1) / 2;
            _tailWords[first - 1].CopyTo(words);
            words[first] = (byte)' ';
            _tailWords[words.Length - first - 2].CopyTo(words[(first + 1)..]);
        }

        tail[^1] = (byte)'.';
    }

    private static byte SentenceEnd(ref Prng rng)
    {
        var roll = rng.Next(100);
        return roll < 85 ? (byte)'.' : roll < 93 ? (byte)'?' : (byte)'!';
    }

    // For each length 1..MaxWordBytes, the most frequent ASCII-only word of exactly that many bytes,
    // or else the ASCII prefix of a longer one, so the tail can always land on the byte.
    private static WordList TailWords(WordList words)
    {
        const int Lengths = PseudoWords.MaxWordBytes;
        var blob = new byte[Lengths * (Lengths + 1) / 2];
        var offsets = new int[Lengths + 1];
        for (var length = 1; length <= Lengths; length++)
        {
            offsets[length] = offsets[length - 1] + length;
        }

        var found = new bool[Lengths];
        foreach (var exactOnly in (ReadOnlySpan<bool>)[true, false])
        {
            for (var rank = 0; rank < words.Count; rank++)
            {
                var word = words[rank];
                if (!Ascii.IsValid(word))
                {
                    continue;
                }

                for (var length = exactOnly ? word.Length : 1; length <= word.Length; length++)
                {
                    if (!found[length - 1])
                    {
                        word[..length].CopyTo(blob.AsSpan(offsets[length - 1]));
                        found[length - 1] = true;
                    }
                }
            }
        }

        return new WordList(blob, offsets);
    }
}
