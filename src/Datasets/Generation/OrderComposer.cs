using System.Buffers;
using System.Globalization;
using System.Text.Encodings.Web;
using System.Text.Json;

namespace Indexing.Datasets;

// Writes order documents of an exact planned size. One instance per enumeration of a dataset:
// it owns the vocabularies (built from the seed) and a reused buffer, and is not thread-safe.
//
// Layout (field names are stable; index definitions point at them):
//   customer { id, name, city, tier }, status, createdAt, paid, tags[], lines[] { product,
//   quantity, price }, lineCount, itemCount, total, notes, description
//
// Sizing: everything up to "notes" is written with Utf8JsonWriter into the reused buffer, each
// variable part (tags, lines, notes) only while it fits under the size with room kept for what
// follows; the body array is then allocated at exactly the planned size, the prefix copied in,
// and "description" written straight into it as raw bytes, padded to the byte by ProseWriter.
// Bypassing the writer for the description saves a copy of the largest part of big documents
// and is safe because ProseWriter emits nothing that needs JSON escaping. Big documents grow
// both their lines (15-35% of the space) and their description.
internal sealed class OrderComposer : IDisposable
{
    // Sizes of the generated catalogues. Customers, products, cities and tags are Zipf-distributed
    // over them, so a few are very common, as in real order data.
    private const int CustomerCount = 20_000;
    private const int ProductCount = 5_000;
    private const int ProductWordCount = 1_500;
    private const int GivenNameCount = 800;
    private const int FamilyNameCount = 2_000;
    private const int CityCount = 400;
    private const int TagCount = 300;

    private const int MaxTags = 5;
    private const int MaxQuantity = 20;
    private const double MaxPrice = 9999.99;
    private const int MaxNotesBytes = 320;
    private const double MinLinesShare = 0.15;
    private const double MaxLinesShare = 0.35;

    // Upper bounds of what each part writes, kept generous: the only promise is that a document of
    // DatasetSpec.MinDocumentBytes always fits the smallest layout (one tag, one line, no text).
    private const int MaxTagBytes = PseudoWords.MaxWordBytes + 3;                            // "tag",
    private const int MaxProductBytes = (2 * PseudoWords.MaxWordBytes) + 1;
    private const int MaxLineBytes = 12 + MaxProductBytes + 13 + 2 + 9 + 7 + 2;             // {"product":"…","quantity":20,"price":9999.99},
    private const int LinesFramingBytes = 11;                                                  // ,"lines":[ ]
    private const int TotalsBytes = 13 + 20 + 13 + 20 + 9 + 24;                              // ,"lineCount":…,"itemCount":…,"total":…
    private const int NotesFramingBytes = 11;                                                  // ,"notes":""

    // {"customer":{"id":"customers/20000","name":"…","city":"…","tier":"platinum"},"status":"cancelled",
    // "createdAt":"2016-01-01T00:00:00Z","paid":false
    private const int HeaderBytes = 13 + 23 + 8 + MaxProductBytes + 2 + 8 + PseudoWords.MaxWordBytes + 2 + 17 + 2 + 21 + 35 + 12;

    private static ReadOnlySpan<byte> DescriptionOpen => ",\"description\":\""u8;
    private static ReadOnlySpan<byte> DescriptionClose => "\"}"u8;

    // Orders are spread over eight years in key order, so createdAt rises with the id like real
    // order numbers; past the planned count (bytes-only specs) dates go on rising, capped far short
    // of DateTime's range.
    private const long OrderSpanSeconds = 8L * 365 * 24 * 3600;
    private const int OrderJitterSeconds = 3600;
    private const double MaxOrderFraction = 100;

    private static readonly DateTime _firstOrderUtc = new(2016, 1, 1, 0, 0, 0, DateTimeKind.Utc);
    private static readonly JsonEncodedText _customer = JsonEncodedText.Encode("customer");
    private static readonly JsonEncodedText _id = JsonEncodedText.Encode("id");
    private static readonly JsonEncodedText _name = JsonEncodedText.Encode("name");
    private static readonly JsonEncodedText _city = JsonEncodedText.Encode("city");
    private static readonly JsonEncodedText _tier = JsonEncodedText.Encode("tier");
    private static readonly JsonEncodedText _status = JsonEncodedText.Encode("status");
    private static readonly JsonEncodedText _createdAt = JsonEncodedText.Encode("createdAt");
    private static readonly JsonEncodedText _paid = JsonEncodedText.Encode("paid");
    private static readonly JsonEncodedText _tags = JsonEncodedText.Encode("tags");
    private static readonly JsonEncodedText _lines = JsonEncodedText.Encode("lines");
    private static readonly JsonEncodedText _product = JsonEncodedText.Encode("product");
    private static readonly JsonEncodedText _quantity = JsonEncodedText.Encode("quantity");
    private static readonly JsonEncodedText _price = JsonEncodedText.Encode("price");
    private static readonly JsonEncodedText _lineCount = JsonEncodedText.Encode("lineCount");
    private static readonly JsonEncodedText _itemCount = JsonEncodedText.Encode("itemCount");
    private static readonly JsonEncodedText _total = JsonEncodedText.Encode("total");
    private static readonly JsonEncodedText _notes = JsonEncodedText.Encode("notes");

    private static readonly Weighted[] _statuses =
    [
        new("pending", 0.08), new("paid", 0.12), new("shipped", 0.20), new("delivered", 0.50), new("cancelled", 0.06), new("returned", 0.04),
    ];

    private static readonly Weighted[] _tiers = [new("bronze", 0.50), new("silver", 0.30), new("gold", 0.15), new("platinum", 0.05)];

    private readonly DatasetSpec _spec;
    private readonly ArrayBufferWriter<byte> _buffer = new(16 * 1024);
    private readonly Utf8JsonWriter _writer;
    private readonly ProseWriter _prose;
    private readonly WordList _givenNames;
    private readonly WordList _familyNames;
    private readonly WordList _cities;
    private readonly WordList _tagWords;
    private readonly WordList _productWords;
    private readonly ZipfTable _customerRanks = new(CustomerCount, 0.8);
    private readonly ZipfTable _cityRanks = new(CityCount, 1.0);
    private readonly ZipfTable _tagRanks = new(TagCount, 1.1);
    private readonly ZipfTable _productRanks = new(ProductCount, 0.9);
    private readonly byte[] _notesText = new byte[MaxNotesBytes];

    public OrderComposer(DatasetSpec spec)
    {
        _spec = spec;
        var rng = Prng.For(spec.Seed, PrngStream.Vocabulary, 0);
        _prose = new ProseWriter(ref rng);
        _givenNames = PseudoWords.Build(ref rng, GivenNameCount, PseudoWords.NameSyllables, capitalize: true, sortByLength: false);
        _familyNames = PseudoWords.Build(ref rng, FamilyNameCount, PseudoWords.NameSyllables, capitalize: true, sortByLength: false);
        _cities = PseudoWords.Build(ref rng, CityCount, PseudoWords.NameSyllables, capitalize: true, sortByLength: false);
        _tagWords = PseudoWords.Build(ref rng, TagCount, PseudoWords.TextSyllables, capitalize: false, sortByLength: true);
        _productWords = PseudoWords.Build(ref rng, ProductWordCount, PseudoWords.NameSyllables, capitalize: true, sortByLength: false);

        // The relaxed encoder leaves accented letters as UTF-8 instead of \u escapes, as most
        // clients would send them; all values are generated here, never echoed into HTML.
        _writer = new Utf8JsonWriter(_buffer, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
    }

    // The smallest size Compose accepts; DatasetSpec.MinDocumentBytes must be at least this.
    internal static int SmallestLayoutBytes =>
        HeaderBytes + 10 + MaxTagBytes + LinesFramingBytes + MaxLineBytes + TotalsBytes + NotesFramingBytes
        + DescriptionOpen.Length + DescriptionClose.Length;

    // A new array of exactly sizeBytes holding the body of the document at this position.
    public byte[] Compose(long position, int sizeBytes)
    {
        var rng = Prng.For(_spec.Seed, PrngStream.Content, position);
        _buffer.ResetWrittenCount();
        _writer.Reset();
        var w = _writer;

        w.WriteStartObject();
        WriteHeader(position, ref rng);

        // Room kept after the lines for the totals and the two text fields (possibly empty).
        var afterLines = TotalsBytes + NotesFramingBytes + DescriptionOpen.Length + DescriptionClose.Length;
        WriteTags(ref rng, sizeBytes - LinesFramingBytes - MaxLineBytes - afterLines);

        var share = MinLinesShare + ((MaxLinesShare - MinLinesShare) * rng.NextDouble());
        var linesEnd = Written + (long)(share * (sizeBytes - Written - afterLines));
        var (lineCount, itemCount, total) = WriteLines(ref rng, Math.Min(linesEnd, sizeBytes - afterLines));

        w.WriteNumber(_lineCount, lineCount);
        w.WriteNumber(_itemCount, itemCount);
        w.WriteNumber(_total, Math.Round(total, 2));

        // Notes stay short: up to MaxNotesBytes, and at most a third of what is left for text.
        var textRoom = sizeBytes - Written - NotesFramingBytes - DescriptionOpen.Length - DescriptionClose.Length;
        var notes = _notesText.AsSpan(0, (int)Math.Min(rng.Next(MaxNotesBytes), Math.Max(0, textRoom / 3)));
        _prose.Fill(notes, ref rng);
        w.WriteString(_notes, notes);
        w.Flush();

        return Finish(sizeBytes, ref rng);
    }

    public void Dispose() => _writer.Dispose();

    private long Written => _writer.BytesCommitted + _writer.BytesPending;

    // customer, status, createdAt and paid (which follows the status).
    private void WriteHeader(long position, ref Prng rng)
    {
        var w = _writer;
        var customer = _customerRanks.Sample(ref rng);
        var person = Prng.For(_spec.Seed, PrngStream.Customer, customer);
        Span<byte> name = stackalloc byte[(2 * PseudoWords.MaxWordBytes) + 1];
        var nameBytes = Pair(_givenNames[person.Next(_givenNames.Count)], _familyNames[person.Next(_familyNames.Count)], name);
        Span<char> id = stackalloc char[16];
        "customers/".CopyTo(id);
        (customer + 1).TryFormat(id[10..], out var digits, default, CultureInfo.InvariantCulture);

        w.WriteStartObject(_customer);
        w.WriteString(_id, id[..(10 + digits)]);
        w.WriteString(_name, name[..nameBytes]);
        w.WriteString(_city, _cities[_cityRanks.Sample(ref person)]);
        w.WriteString(_tier, Pick(_tiers, ref person));
        w.WriteEndObject();

        var status = Pick(_statuses, ref rng);
        w.WriteString(_status, status);
        var fraction = Math.Min((double)position / _spec.PlannedDocumentCount, MaxOrderFraction);
        var seconds = (long)(fraction * OrderSpanSeconds) + rng.Next(OrderJitterSeconds);
        w.WriteString(_createdAt, _firstOrderUtc.AddSeconds(seconds));
        w.WriteBoolean(_paid, status is not ("pending" or "cancelled"));
    }

    // 1 to MaxTags distinct tags, as many as fit before tagsEnd (the first always does).
    private void WriteTags(ref Prng rng, long tagsEnd)
    {
        var w = _writer;
        Span<int> chosen = stackalloc int[MaxTags];
        var wanted = rng.Next(1, MaxTags);
        var count = 0;
        w.WriteStartArray(_tags);
        while (count < wanted && (count == 0 || Written + MaxTagBytes + 1 <= tagsEnd))
        {
            var tag = _tagRanks.Sample(ref rng);
            if (!chosen[..count].Contains(tag))
            {
                chosen[count++] = tag;
                w.WriteStringValue(_tagWords[tag]);
            }
        }

        w.WriteEndArray();
    }

    // Order lines while the next one still fits before linesEnd (the first always does).
    private (int Lines, long Items, double Total) WriteLines(ref Prng rng, long linesEnd)
    {
        var w = _writer;
        Span<byte> name = stackalloc byte[MaxProductBytes];
        var lines = 0;
        long items = 0;
        var total = 0.0;
        w.WriteStartArray(_lines);
        do
        {
            var product = Prng.For(_spec.Seed, PrngStream.Product, _productRanks.Sample(ref rng));
            var nameBytes = Pair(_productWords[product.Next(_productWords.Count)], _productWords[product.Next(_productWords.Count)], name);
            var price = Math.Round(Math.Clamp(Math.Exp(3 + (1.1 * product.NextNormal())), 0.5, MaxPrice), 2);
            var quantity = 1;
            while (quantity < MaxQuantity && rng.Chance(0.3))
            {
                quantity++;
            }

            w.WriteStartObject();
            w.WriteString(_product, name[..nameBytes]);
            w.WriteNumber(_quantity, quantity);
            w.WriteNumber(_price, price);
            w.WriteEndObject();
            lines++;
            items += quantity;
            total += quantity * price;
        }
        while (Written + MaxLineBytes + 1 <= linesEnd);

        w.WriteEndArray();
        return (lines, items, total);
    }

    // Copies the prefix into the body array and writes the description to fill it exactly.
    private byte[] Finish(int sizeBytes, ref Prng rng)
    {
        var prefix = _buffer.WrittenSpan;
        var textBytes = sizeBytes - prefix.Length - DescriptionOpen.Length - DescriptionClose.Length;
        if (textBytes < 0)
        {
            throw new InvalidOperationException(
                $"document layout took {prefix.Length} bytes, more than its planned {sizeBytes}; the size reserves in {nameof(OrderComposer)} are too small.");
        }

        var body = GC.AllocateUninitializedArray<byte>(sizeBytes);
        var rest = body.AsSpan();
        prefix.CopyTo(rest);
        rest = rest[prefix.Length..];
        DescriptionOpen.CopyTo(rest);
        _prose.Fill(rest.Slice(DescriptionOpen.Length, textBytes), ref rng);
        DescriptionClose.CopyTo(rest[(DescriptionOpen.Length + textBytes)..]);
        return body;
    }

    private static int Pair(ReadOnlySpan<byte> first, ReadOnlySpan<byte> second, Span<byte> destination)
    {
        first.CopyTo(destination);
        destination[first.Length] = (byte)' ';
        second.CopyTo(destination[(first.Length + 1)..]);
        return first.Length + 1 + second.Length;
    }

    private static string Pick(Weighted[] choices, ref Prng rng)
    {
        var roll = rng.NextDouble();
        foreach (var choice in choices)
        {
            if (roll < choice.Weight)
            {
                return choice.Value;
            }

            roll -= choice.Weight;
        }

        return choices[^1].Value;
    }

    private readonly record struct Weighted(string Value, double Weight);
}
